/* hloc's C API: compile HLO text with a hardware profile, run the executable on host arrays,
 * serialize it to / load it from the .hlox format. A stable, plain-C surface over the C++
 * compiler and runtimes (libhloc.so), for language bindings (python/hloc uses it through ctypes).
 *
 * Conventions: functions returning a pointer return NULL on failure, functions returning int
 * return 0 on success and -1 on failure; after a failure hloc_last_error() holds the message
 * (this thread's last error; parse errors start with FILE:LINE:COL). Arrays cross the boundary
 * as dense row-major bytes (C order) in the element types of the executable's shapes.
 * Nothing here throws; every object is freed by its own free function. */
#ifndef HLOC_C_H_
#define HLOC_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HLOC_C_API_VERSION 1

typedef struct hloc_executable hloc_executable;

/* The library's version ("0.1.0") and the C API version (HLOC_C_API_VERSION). */
const char* hloc_version(void);
int hloc_c_api_version(void);

/* This thread's last error message ("" when none). Valid until the next failing call. */
const char* hloc_last_error(void);

/* 0 when a GPU can run executables here; else -1 with the reason in hloc_last_error(). */
int hloc_gpu_available(void);

/* Compiles HLO text (`len` bytes; `source_name` names it in error messages, may be NULL) for
 * `profile`: a name looked up as NAME.yaml in the config folders (HLOC_CONFIG_DIR, then
 * configs/ near the library, then the source tree it was built from) or a path. The profile's
 * `kind:` picks the backend (cpu or gpu; GPU compilation is deviceless). */
hloc_executable* hloc_compile(const char* text, size_t len, const char* source_name, const char* profile);

/* Loads a serialized executable (.hlox bytes). */
hloc_executable* hloc_deserialize(const void* bytes, size_t len, const char* origin);

/* The .hlox bytes of `exe` in a buffer the caller frees with hloc_free_buffer. */
int hloc_serialize(const hloc_executable* exe, void** bytes, size_t* len);
void hloc_free_buffer(void* bytes);

void hloc_executable_free(hloc_executable* exe);

/* "cpu" or "gpu"; the profile name; the module's name. Owned by `exe`. */
const char* hloc_executable_platform(const hloc_executable* exe);
const char* hloc_executable_profile(const hloc_executable* exe);
const char* hloc_executable_module_name(const hloc_executable* exe);
/* The optimized, scheduled module as text. Owned by `exe`. */
const char* hloc_executable_hlo_text(const hloc_executable* exe);

int64_t hloc_executable_num_parameters(const hloc_executable* exe);
int64_t hloc_executable_num_results(const hloc_executable* exe);
/* 1 when the entry result is a tuple (results are then its flattened leaves), else 0. */
int hloc_executable_result_is_tuple(const hloc_executable* exe);

/* Parameter / result leaf `i`: its HLO element type ("f32", "bf16", "pred", ...; owned by
 * `exe`), rank and dimensions (owned by `exe`; NULL for rank 0). */
int hloc_executable_parameter(const hloc_executable* exe, int64_t i, const char** element_type, int64_t* rank,
                              const int64_t** dims);
int hloc_executable_result(const hloc_executable* exe, int64_t i, const char** element_type, int64_t* rank,
                           const int64_t** dims);

/* Runs once. `args[i]` points at parameter i's dense row-major bytes (`arg_sizes[i]` bytes,
 * which must equal its shape's byte size); `results[j]` at caller memory of `result_sizes[j]`
 * bytes that receives result leaf j, row-major. Host memory only: a GPU executable copies the
 * arguments to the device and the results back. The first run loads the code (the CPU's JIT
 * link, or the GPU's module load); HLOC_NUM_THREADS sets the CPU runtime's threads (default: all
 * cores). Runs of one executable take turns. */
int hloc_execute(hloc_executable* exe, int64_t num_args, const void* const* args, const int64_t* arg_sizes,
                 int64_t num_results, void* const* results, const int64_t* result_sizes);

/* Runs a GPU executable on device memory (the DLPack path: no host round trip). `args[i]` is
 * the device address of parameter i's row-major bytes, `results[j]` of room for result leaf j,
 * on device 0 (its primary context, which JAX and PyTorch use too). Work queued on that context
 * before the call is waited for; the call returns when the results are written. Where buffer
 * assignment allows, the executable reads the arguments and writes the results in place (a
 * parameter the program never writes, a result alone in its buffer; 256-byte aligned); the others
 * are copied device to device. Fails for CPU executables and for a parameter or result whose
 * layout is not row-major (use hloc_execute then). */
int hloc_execute_device(hloc_executable* exe, int64_t num_args, const uint64_t* args, int64_t num_results,
                        const uint64_t* results);

/* How many arguments and results the last hloc_execute_device call used in place, without a
 * copy (0 before any; -1 for a CPU executable). */
int64_t hloc_executable_last_in_place(const hloc_executable* exe);

/* 1 when every parameter and result leaf is row-major (hloc_execute_device can run it), else 0. */
int hloc_executable_row_major_io(const hloc_executable* exe);

/* Device memory on device 0 for results (freed by hloc_gpu_free; it outlives executables), and
 * a copy of `bytes` bytes of it to host memory (waits for the copy). */
int hloc_gpu_alloc(int64_t bytes, uint64_t* address);
int hloc_gpu_free(uint64_t address);
int hloc_gpu_copy_to_host(uint64_t address, int64_t bytes, void* host);

#ifdef __cplusplus
}
#endif

#endif /* HLOC_C_H_ */
