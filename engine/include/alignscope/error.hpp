// The one error type of the engine. Every failure a user can cause (bad file,
// bad parameter, device failure) surfaces as an alignscope::Error whose message
// is meant to be shown as is: it names the file, line, parameter or device.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace alignscope {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}

    // An error about one parameter of a job, named in the engine's words
    // (snake_case: "gap_open", "matrix", "device", "kernel"), with what is
    // wrong said without naming it (`detail`). what() words it as the
    // command line does ("--gap-open: ..."); a GUI words it with its own
    // field label from parameter() and detail().
    static Error about(std::string parameter, std::string detail) {
        return Error(std::move(parameter), std::move(detail), 0);
    }

    // Empty for an error not about one parameter.
    const std::string& parameter() const { return parameter_; }
    // The message without the parameter's name (the whole message when there
    // is no parameter).
    std::string detail() const { return parameter_.empty() ? std::string(what()) : detail_; }

    // "gap_open" -> "--gap-open".
    static std::string flag_of(const std::string& parameter) {
        std::string flag = "--" + parameter;
        for (char& c : flag)
            if (c == '_') c = '-';
        return flag;
    }

private:
    Error(std::string parameter, std::string detail, int)
        : std::runtime_error(flag_of(parameter) + ": " + detail),
          parameter_(std::move(parameter)),
          detail_(std::move(detail)) {}

    std::string parameter_;
    std::string detail_;
};

// Thrown when a job notices its cancellation token; not a failure.
class Cancelled : public Error {
public:
    Cancelled() : Error("cancelled by the user") {}
};

}  // namespace alignscope
