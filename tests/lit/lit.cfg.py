# lit configuration for hloc's FileCheck tests: `python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv tests/lit`.
# RUN lines use the plain tool names hloc, FileCheck and not (substituted with absolute paths),
# %corpus for tests/corpus and %python for this Python.
import os
import re
import shutil
import subprocess
import sys

import lit.formats

config.name = "hloc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".hlo", ".test"]
# Inputs/ folders hold data files that RUN lines read, not tests.
config.excludes = ["Inputs", "README.md", "lit.cfg.py"]

config.test_source_root = os.path.dirname(os.path.abspath(__file__))
repo_root = os.path.dirname(os.path.dirname(config.test_source_root))
build_dir = os.environ.get("HLOC_BUILD_DIR", os.path.join(repo_root, "build"))
# Temporary files (%t) go under the build folder, never into the source tree.
config.test_exec_root = os.path.join(build_dir, "lit-out")


def find_tool(name, env_var, candidates):
    path = os.environ.get(env_var)
    if path:
        return os.path.abspath(path)
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if found:
        return found
    lit_config.fatal(f"cannot find {name}: set {env_var} or put it on PATH")


llvm_bin = "/usr/lib/llvm-19/bin"
hloc = find_tool("hloc", "HLOC_BIN", [os.path.join(build_dir, "hloc")])
filecheck = find_tool("FileCheck", "FILECHECK", [os.path.join(llvm_bin, "FileCheck")])
not_tool = find_tool("not", "NOT", [os.path.join(llvm_bin, "not")])
lit_config.note(f"hloc: {hloc}")

# Whole-word substitutions, as LLVM's ToolSubst does: not inside paths or other words.
def tool_pattern(name):
    return r"(?<![\w./%+-])" + re.escape(name) + r"(?![\w./-])"


config.substitutions.append(("%corpus", os.path.join(repo_root, "tests", "corpus")))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append((tool_pattern("FileCheck"), filecheck))
config.substitutions.append((tool_pattern("hloc"), hloc))
config.substitutions.append((tool_pattern("not"), not_tool))

# A clean, predictable environment; LLVM's test tools (count, ...) on PATH.
config.environment["LC_ALL"] = "C"
config.environment["PATH"] = os.pathsep.join([llvm_bin, config.environment.get("PATH", os.environ.get("PATH", ""))])

# NVIDIA's PTX assembler, where the CUDA toolkit is installed (no GPU needed): tests that check
# that emitted PTX assembles say `REQUIRES: ptxas` and call %ptxas.
ptxas = os.environ.get("PTXAS") or shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
if os.path.isfile(ptxas) and os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# tests/lit/cpu-onednn: hloc built with oneDNN (not the static build), as `hloc --version` says.
try:
    if "oneDNN" in subprocess.run([hloc, "--version"], capture_output=True, text=True, timeout=60).stdout:
        config.available_features.add("onednn")
except (OSError, subprocess.SubprocessError):
    pass

# tests/lit/install: `cmake --install %hloc-build` (the build folder hloc came from) where that
# folder is a CMake build and cmake is on PATH.
hloc_build = os.path.dirname(hloc)
config.substitutions.append(("%hloc-build", hloc_build))
if os.path.isfile(os.path.join(hloc_build, "cmake_install.cmake")) and shutil.which("cmake"):
    config.available_features.add("cmake-install")

# The Python package (tests/lit/python): `libhloc` where libhloc.so is built (scripts/build,
# or HLOC_LIBRARY), `numpy` and %numpy_python where this Python or Debian's python3 has numpy.
import subprocess


def _has_numpy(python):
    try:
        return subprocess.run([python, "-c", "import numpy"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


for _python in [sys.executable, "/usr/bin/python3"]:
    if os.path.isfile(_python) and _has_numpy(_python):
        config.available_features.add("numpy")
        config.substitutions.append(("%numpy_python", _python))
        break
for _lib in [os.environ.get("HLOC_LIBRARY", ""), os.path.join(repo_root, "python", "hloc", "libhloc.so"),
             os.path.join(build_dir, "libhloc.so")]:
    if _lib and os.path.isfile(_lib):
        config.available_features.add("libhloc")
        break
for _var in ["HLOC_LIBRARY", "HLOC_CACHE_DIR", "HOME"]:
    if _var in os.environ:
        config.environment[_var] = os.environ[_var]
