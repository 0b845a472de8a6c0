// A folder of this fuzzing process's own (in /dev/shm where there is one), for harnesses whose
// code under test reads paths. Made on first use, removed when the process exits normally (a crash
// leaves it, with the files of the input that crashed).
#ifndef BRAID_TESTS_FUZZ_TEMP_FOLDER_H_
#define BRAID_TESTS_FUZZ_TEMP_FOLDER_H_

#include <string>

namespace braid::fuzz {

// "<folder>/<name>", the folder made if missing.
std::string TempPath(const std::string& name);
// Writes `bytes` to TempPath(name) (replacing it) and returns the path.
std::string WriteTemp(const std::string& name, const std::string& bytes);

}  // namespace braid::fuzz

#endif  // BRAID_TESTS_FUZZ_TEMP_FOLDER_H_
