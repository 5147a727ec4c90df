"""pytest setup of the model zoo (tests/zoo/test_zoo.py)."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


def pytest_configure(config):
    config.addinivalue_line("markers", "zoo_full: a zoo case outside the CI subset (runs with OPFORGE_ZOO=all)")
