"""The `opforge` console script of the wheel: runs the CLI binary the wheel holds (opforge/bin/opforge)
with the same arguments. It finds the package without importing it (no torch is loaded to run the CLI)."""
import importlib.util
import os
import pathlib
import sys


def binary() -> pathlib.Path:
    spec = importlib.util.find_spec("opforge")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the opforge package is not installed")
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / "bin" / "opforge"


def main():
    try:
        exe = binary()
    except FileNotFoundError as e:
        sys.stderr.write(f"opforge: {e}\n")
        return 2
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"opforge: {exe} does not exist or is not executable: the console script runs the CLI "
                         f"binary of the opforge wheel (a development install has it in the build tree: "
                         f"build/bin/opforge)\n")
        return 2
    os.execv(exe, [str(exe)] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
