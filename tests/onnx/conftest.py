import sys
from pathlib import Path

# The tiny Hugging Face models of every family airfuse.patch supports live with the fusion tests.
sys.path.insert(0, str(Path(__file__).parents[1] / "fusion"))
