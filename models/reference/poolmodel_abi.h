/* poolmodel_abi.h - The C interface of a compiled reference-model kernel.
 *
 * A model kernel is token_model.h compiled against one artifact's address
 * header (poolc --emit=header) for one backend: a shared object exporting
 * poolmodel_get_ops(). pool-serve (--model-kernel LIB) loads it, checks the
 * backend and the layout fingerprint against the artifact it serves, and
 * runs every forward through it instead of the manifest-driven model.
 *
 * Plain C, no includes: the same declarations for g++, nvcc and clang. */
#ifndef POOLMODEL_ABI_H
#define POOLMODEL_ABI_H

#define POOLMODEL_ABI_VERSION 1

/* Why a call failed (poolmodel_call.error). */
enum {
  POOLMODEL_OK = 0,
  POOLMODEL_BAD_ARGS = 1,      /* counts, positions or the state id */
  POOLMODEL_PAST_TABLE = 2,    /* a position past the request's blocks */
  POOLMODEL_BAD_BLOCK = 3,     /* a block id outside [0, kPageEntries) */
  POOLMODEL_OUT_OF_ARENA = 4,  /* an offset outside the allocation */
  POOLMODEL_NO_PLAN = 5,       /* the layout lacks what the model needs */
  POOLMODEL_BACKEND = 6        /* the backend's own call failed */
};

/* One forward (or checksum) of one request. */
typedef struct poolmodel_call {
  /* in */
  long long start;    /* first position (checksum: the position) */
  long long count;    /* positions forwarded */
  long long rejected; /* junk window rows after the last position */
  int extend;         /* decode: feed the samples back into tokens */
  int state_id;       /* a physical slot (row space), a group, or -1 */
  const int *block_table;
  long long table_len;
  long long *tokens;  /* [0, start + count); extend: [0, start + 1) given,
                         the rest written */
  long long tokens_len;
  /* out */
  long long next;              /* the token sampled after the last position */
  unsigned long long checksum; /* checksum calls */
  int error;                   /* POOLMODEL_* */
  long long error_at;          /* the offset, position or id at fault */
  long long accesses;          /* 8-byte arena accesses this call made */
} poolmodel_call;

typedef struct poolmodel_ops {
  int abi_version;
  const char *model;                     /* poolc model name */
  unsigned long long layout_fingerprint; /* the header's kLayoutFingerprint */
  const char *backend;                   /* "host", "cuda" or "hip" */
  /* `arena` is the allocation's device address (a host pointer on host).
   * Each returns the call's error, or POOLMODEL_OK. */
  int (*forward)(unsigned long long arena, poolmodel_call *call);
  int (*checksum)(unsigned long long arena, poolmodel_call *call);
} poolmodel_ops;

#ifdef __cplusplus
extern "C" {
#endif
typedef const poolmodel_ops *(*poolmodel_get_ops_fn)(void);
#ifdef __cplusplus
}
#endif

#endif
