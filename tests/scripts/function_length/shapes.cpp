// Fixture for scripts/function-length: the shapes of C++ it must measure.
#include <functional>
#define BLOCK(x) { int y = x; }
#define LONG_MACRO(name) \
    void name() {        \
    }

namespace outer::inner {

namespace {

int free_function(int a) {
    auto twice = [](int v) {
        return v * 2;
    };
    const char* text = "}}} { \" {";
    char brace = '{';
    const char* raw = R"x( } ) " { )x";
    int big = 34'000;  // } a comment
    /* { */
    return twice(a) + text[0] + brace + raw[0] + big;
}

}  // namespace

enum class Colour : int { red, green, blue };

const int table[] = {
    1, 2, 3,
};

struct Plain {
    int x{0};
    std::function<void()> callback_{};
    Plain() = default;
    Plain(int a, int b)
        : x{a + b}, callback_([] {
              int inner = 0;
              (void)inner;
          }) {
        x += 1;
    }
    ~Plain() {
        x = 0;
    }

public:
    int operator()(int a) const {
        return a + x;
    }
    bool operator==(const Plain& other) const noexcept(true) {
        return x == other.x;
    }
    explicit operator bool() const { return x != 0; }

    struct Nested {
        void deep() {
            struct Local {
                int f() { return 1; }
            };
        }
    };
};

template <typename T>
class Box {
public:
    void put(const T& value);
    T take() const
    {
        return value_;
    }

private:
    T value_{};
};

template <typename T>
void Box<T>::put(const T& value) {
    value_ = value;
}

std::function<void()> make_callback(int n) {
    return [n]() {
        if (n > 0) {
            BLOCK(n)
        }
    };
}

auto trailing(int a) -> decltype(a + 1) {
    return a + 1;
}

auto held = [](int a) {
    return a;
};

extern "C" {
int c_function(void) {
    return 0;
}
}

}  // namespace outer::inner

Plain::Plain(const Plain& other) : x(other.x) {
    x = other.x;
}

class Widget : public Base {
    Q_OBJECT
public slots:
    void refresh() {
        if constexpr (sizeof(int) == 4) {
            count_ = 1;
        }
    }
signals:
    void changed();

private:
    explicit Widget(int count) : Base{count}, count_{count} {
        count_ += 1;
    }
    int count_ = 0;
};

std::ostream& operator<<(std::ostream& out, const Plain& p) {
    return out << p.x;
}
