// Status and Error: how braid reports everything that input can cause.
//
// A Status is a small value: a code and a message naming the net, the op (index, type, name), the
// blob and the shapes involved. Functions of the public API return a Status. Inside braid, code
// that meets bad input throws braid::Error (which carries a Status); the public API and the
// executors catch it and return the Status. Internal invariants use glog CHECK, never Error.
//
// Thread safety: Status and Error are values; copies may be used from any thread.
//
//   braid::Status s = session.RunNet("train");
//   if (!s.ok()) std::cerr << s.ToString() << "\n";   // "InvalidArgument: net 'train' op #3 ..."
#ifndef BRAID_STATUS_H_
#define BRAID_STATUS_H_

#include <exception>
#include <string>
#include <utility>

namespace braid {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // a malformed net, flag, shape or value
  kNotFound,            // a missing file, blob, op type or net
  kFailedPrecondition,  // the call is not allowed now (e.g. a net already running)
  kIoError,             // reading or writing a file failed
  kInternal,            // an op failed at run time
  kResourceExhausted,   // a device ran out of memory
  kDeadlineExceeded,    // a deadline passed: a request's (RunOptions), a peer's, or a device's
                        // watchdog's (no progress for its time: a hang)
  kCancelled,           // the caller cancelled the call (RunOptions::stop)
};

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "OK" or "<CodeName>: <message>".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

const char* StatusCodeName(StatusCode code);

// The exception form of a non-OK Status, thrown inside braid and by ops.
class Error : public std::exception {
 public:
  explicit Error(Status status) : status_(std::move(status)), what_(status_.ToString()) {}
  const Status& status() const { return status_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  Status status_;
  std::string what_;
};

// Runs fn and converts whatever it throws into a Status: a braid::Error's own, a std::exception's
// what() (Internal), anything else Internal "unknown exception".
template <typename Fn>
Status StatusFromCall(Fn&& fn) {
  try {
    fn();
    return Status::OK();
  } catch (const Error& e) {
    return e.status();
  } catch (const std::exception& e) {
    return Status::Internal(e.what());
  } catch (...) {
    return Status::Internal("unknown exception (not a std::exception)");
  }
}

}  // namespace braid

#endif  // BRAID_STATUS_H_
