// SPDX-License-Identifier: Apache-2.0 OR MIT
// A request the daemon refuses: the gRPC status code it maps to and a message naming the field.
// Kept free of gRPC so that the journal and path code (and their tests) need no gRPC.
#pragma once

#include <stdexcept>
#include <string>

namespace pp::service {

enum class ErrorCode {
  invalid_argument,    // a malformed field, a path outside --data-root, a missing file
  not_found,           // an unknown job id
  already_exists,      // a request_id reused for a different request
  resource_exhausted,  // the queue is full, or a partition needs more than the whole host budget
  unimplemented,       // a request for something this version does not do
  unavailable,         // the daemon is shutting down
  unauthenticated,     // a missing or wrong bearer token
};

class RequestError : public std::runtime_error {
 public:
  RequestError(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace pp::service
