// A module without a pool.model: codegen has nothing to read.
module {}
