// QA driver (scripts/qa/build-progs2.sh): Boost.Graph algorithms, a Boost.Spirit Qi recursive
// grammar (expression -> term -> factor -> expression: a cycle through Spirit's rule machinery),
// std::regex (recursive executor) and a hand-written mutually recursive evaluator; 2 threads.
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/kruskal_min_spanning_tree.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>
#include <boost/spirit/include/qi.hpp>
#include <boost/phoenix/operator.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace qi = boost::spirit::qi;
static double cpu() { return double(std::clock()) / CLOCKS_PER_SEC; }

template <typename It> struct calc : qi::grammar<It, int(), qi::space_type> {
  calc() : calc::base_type(expr) {
    using qi::_1;
    using qi::_val;
    expr = term[_val = _1] >> *(('+' >> term[_val += _1]) | ('-' >> term[_val -= _1]));
    term = factor[_val = _1] >> *(('*' >> factor[_val *= _1]) | ('/' >> factor[_val /= _1]));
    factor = qi::int_[_val = _1] | '(' >> expr[_val = _1] >> ')' | ('-' >> factor[_val = -_1]);
  }
  qi::rule<It, int(), qi::space_type> expr, term, factor;
};

static std::string gen_expr(std::mt19937 &r, int depth) {
  if (depth > 5 || r() % 3 == 0) return std::to_string(1 + r() % 9);
  const char *ops = "+-*";
  std::string s = "(" + gen_expr(r, depth + 1) + ops[r() % 3] + gen_expr(r, depth + 1) + ")";
  return s;
}

static long parse_many(int n, unsigned seed) {
  std::mt19937 r(seed);
  calc<std::string::const_iterator> g;
  long sum = 0;
  for (int i = 0; i < n; ++i) {
    std::string e = gen_expr(r, 0);
    int v = 0;
    auto b = e.cbegin();
    if (qi::phrase_parse(b, e.cend(), g, qi::space, v)) sum += v;
  }
  return sum;
}

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                    boost::property<boost::edge_weight_t, int>>;
using UGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                     boost::no_property, boost::property<boost::edge_weight_t, int>>;

static long graph_work(int n, unsigned seed) {
  std::mt19937 r(seed);
  Graph g(n);
  UGraph u(n);
  for (int i = 0; i < n * 4; ++i) {
    int a = r() % n, b = r() % n, w = 1 + r() % 100;
    boost::add_edge(a, b, w, g);
    boost::add_edge(a, b, w, u);
  }
  std::vector<int> dist(n), comp(n);
  boost::dijkstra_shortest_paths(g, 0, boost::distance_map(dist.data()));
  int nc = boost::strong_components(g, comp.data());
  std::vector<boost::graph_traits<UGraph>::edge_descriptor> mst;
  boost::kruskal_minimum_spanning_tree(u, std::back_inserter(mst));
  long s = nc + (long)mst.size();
  for (int d : dist) s += d < 1000000 ? d : 0;
  return s;
}

// Mutual recursion: a tiny Lisp-ish evaluator over the same expressions.
static long eval_sum(const std::string &s, size_t &i);
static long eval_atom(const std::string &s, size_t &i) {
  if (s[i] == '(') { ++i; long v = eval_sum(s, i); ++i; return v; }
  long v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
  return v;
}
static long eval_sum(const std::string &s, size_t &i) {
  long v = eval_atom(s, i);
  while (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == '*')) {
    char op = s[i++];
    long w = eval_atom(s, i);
    v = op == '+' ? v + w : op == '-' ? v - w : v * w;
  }
  return v;
}

static long regex_work(int n, unsigned seed) {
  std::mt19937 r(seed);
  std::regex re("\\(([0-9]+)([-+*])([0-9]+)\\)");
  long hits = 0;
  for (int i = 0; i < n; ++i) {
    std::string e = gen_expr(r, 0);
    size_t k = 0;
    hits += eval_sum(e, k) & 7;
    for (std::sregex_iterator it(e.begin(), e.end(), re), end; it != end; ++it) ++hits;
  }
  return hits;
}

int main(int argc, char **argv) {
  double budget = argc > 1 ? std::atof(argv[1]) : 1.5;
  long acc = 0, acc2 = 0;
  int round = 0;
  std::thread t([&] {
    for (int i = 0; i < 20; ++i) acc2 += graph_work(300, 1000 + i) + regex_work(50, i);
  });
  while (cpu() < budget) {
    acc += parse_many(200, round) + graph_work(400 + round % 100, round) + regex_work(100, round);
    ++round;
  }
  t.join();
  std::printf("%d rounds %ld %ld\n", round, acc, acc2);
  return 0;
}
