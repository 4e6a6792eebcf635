"""The sync-mutation test's kernel scenarios (tests/kernels/sync_scenarios.py), for tests/vendor:
the same launches, run here on both twins (the 910B ones on the vendor-API twin's dav_c220 builds,
the 310P ones on its dav_m200 builds)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernels"))
from sync_scenarios import ALL, launches  # noqa: E402

__all__ = ["ALL", "launches"]
