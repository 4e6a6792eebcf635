# Kernel launches here run on the vendor-API twin where it is built, else on the home-made twin (tests/kernel_twin.py).
from kernel_twin import kernel_twin_of_module, kernel_twin_of_test  # noqa: F401
