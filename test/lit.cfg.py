# -*- Python -*-
import os
import lit.formats
from lit.llvm import llvm_config

config.name = "POOLC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.poolc_obj_root, "test")
config.excludes = ["Inputs", "corpus", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Unit", "Conformance", "models"]

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [os.path.join(config.poolc_obj_root, "bin"), config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["poolc", "pool-opt", "pool-explore", "pool-pack-info", "pool-kernel-check", "pool-serve", "llvm-readelf"], tool_dirs)
# The poolrt Python module of this build (for tests that craft artifacts).
config.environment["PYTHONPATH"] = os.path.join(config.poolc_obj_root, "python")
config.substitutions.append(("%models", os.path.join(config.poolc_src_root, "models")))
