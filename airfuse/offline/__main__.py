"""``python -m airfuse.offline``: fetch offline TorchAir and torch_npu's SDK into the cache.

Once per machine; later runs verify the cache against its manifest. ``--repair`` downloads and
replaces it; ``--sdk-path`` prints the SDK directory (headers and libtorch_npu.so) for builds.
"""

import argparse
import sys

from .fetch import CacheError, fetch, torch_npu_sdk_root, torch_npu_version

parser = argparse.ArgumentParser(prog="python -m airfuse.offline", description=__doc__.split("\n\n")[0])
parser.add_argument("--repair", action="store_true", help="download the torch_npu wheel again and replace the cache")
parser.add_argument("--sdk-path", action="store_true", help="print the torch_npu SDK directory (after fetching)")
args = parser.parse_args()
try:
    root = fetch(repair=args.repair)
except CacheError as err:
    sys.exit(str(err))
print(torch_npu_sdk_root() if args.sdk_path else f"offline TorchAir and torch_npu SDK {torch_npu_version()}: {root}")
