// QA driver (scripts/qa/build-progs2.sh): extra googletest/googlemock tests linked with
// googletest's own samples 1-8, so the profile holds gtest's internals (template-heavy), typed
// and value-parameterized tests, a mock, and ~1 s of CPU in mutually recursive helpers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <cstdlib>
#include <ctime>
#include <list>
#include <map>
#include <string>
#include <vector>

namespace qa {
static double cpu() { return double(std::clock()) / CLOCKS_PER_SEC; }
template <typename T> T collatz_odd(T n, int d);
template <typename T> T collatz_even(T n, int d) {
  if (n <= 1 || d > 500) return T(d);
  return (n % 2 == 0) ? collatz_even<T>(n / 2, d + 1) : collatz_odd<T>(n, d + 1);
}
template <typename T> T collatz_odd(T n, int d) {
  if (n <= 1 || d > 500) return T(d);
  return collatz_even<T>(3 * n + 1, d + 1);
}

class Store {
 public:
  virtual ~Store() = default;
  virtual int Get(const std::string &key) = 0;
  virtual void Put(const std::string &key, int v) = 0;
};
class MockStore : public Store {
 public:
  MOCK_METHOD(int, Get, (const std::string &key), (override));
  MOCK_METHOD(void, Put, (const std::string &key, int v), (override));
};
}  // namespace qa

template <typename T> class CollatzTyped : public ::testing::Test {};
using CollatzTypes = ::testing::Types<int, long, unsigned long long, short>;
TYPED_TEST_SUITE(CollatzTyped, CollatzTypes);
TYPED_TEST(CollatzTyped, Terminates) {
  long total = 0;
  double budget = std::getenv("QA_BUDGET") ? std::atof(std::getenv("QA_BUDGET")) : 1.2;
  double end = qa::cpu() + budget / 4;
  for (TypeParam i = 1; qa::cpu() < end; i = TypeParam(i % 20000 + 1))
    for (int k = 0; k < 200; ++k) total += (long)qa::collatz_even<TypeParam>(TypeParam(i + k), 0);
  EXPECT_GT(total, 0);
}

class Squares : public ::testing::TestWithParam<int> {};
TEST_P(Squares, Matches) {
  std::map<int, std::vector<std::string>> m;
  for (int i = 0; i < GetParam() * 100; ++i) m[i % 17].push_back(std::to_string(i * i));
  EXPECT_THAT(m[0], ::testing::Not(::testing::IsEmpty()));
  EXPECT_THAT(m[1].front(), ::testing::StartsWith("1"));
}
INSTANTIATE_TEST_SUITE_P(Range, Squares, ::testing::Range(1, 40));

TEST(Mock, CallsAreCounted) {
  qa::MockStore s;
  using ::testing::_;
  using ::testing::Return;
  EXPECT_CALL(s, Get(_)).WillRepeatedly(Return(7));
  EXPECT_CALL(s, Put(::testing::StartsWith("k"), ::testing::Gt(0))).Times(500);
  int sum = 0;
  for (int i = 0; i < 500; ++i) {
    sum += s.Get("x");
    s.Put("k" + std::to_string(i), i + 1);
  }
  EXPECT_EQ(sum, 3500);
  EXPECT_THAT(std::vector<int>({1, 2, 3}), ::testing::ElementsAre(1, 2, ::testing::Ge(3)));
  EXPECT_THAT((std::list<std::string>{"a", "b"}), ::testing::Contains("b"));
}
