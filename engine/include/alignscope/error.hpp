// The one error type of the engine. Every failure a user can cause (bad file,
// bad parameter, device failure) surfaces as an alignscope::Error whose message
// is meant to be shown as is: it names the file, line, parameter or device.
#pragma once

#include <stdexcept>
#include <string>

namespace alignscope {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Thrown when a job notices its cancellation token; not a failure.
class Cancelled : public Error {
public:
    Cancelled() : Error("cancelled by the user") {}
};

}  // namespace alignscope
