"""pytest setup of the model zoo (tests/zoo/test_zoo.py)."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
# helpers shared with the Python tests (cpu_int8: whether ONNX Runtime referees full-range INT8 here)
sys.path.insert(1, str(pathlib.Path(__file__).resolve().parents[1] / "python"))


def pytest_configure(config):
    config.addinivalue_line("markers", "zoo_full: a zoo case outside the CI subset (runs with OPFORGE_ZOO=all)")
