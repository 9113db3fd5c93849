// QA driver (scripts/qa/build-progs2.sh): nlohmann::json and RapidJSON building, dumping and
// parsing random nested documents (recursive), with 3 worker threads; make_obj/make_arr recurse
// into each other (a cycle).
#include <nlohmann/json.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

static double cpu() { return double(std::clock()) / CLOCKS_PER_SEC; }
using nlohmann::json;

static json make_arr(std::mt19937 &r, int d);
static json make_obj(std::mt19937 &r, int d) {
  json o = json::object();
  int n = 1 + r() % 5;
  for (int i = 0; i < n; ++i) {
    std::string k = "k" + std::to_string(r() % 50);
    switch (r() % 4) {
    case 0: o[k] = (int)(r() % 1000); break;
    case 1: o[k] = std::to_string(r()); break;
    case 2: o[k] = d < 5 ? make_arr(r, d + 1) : json(1.5); break;
    default: o[k] = d < 5 ? make_obj(r, d + 1) : json(nullptr); break;
    }
  }
  return o;
}
static json make_arr(std::mt19937 &r, int d) {
  json a = json::array();
  int n = r() % 6;
  for (int i = 0; i < n; ++i) a.push_back(r() % 2 ? make_obj(r, d + 1) : json(r() % 100 * 0.25));
  return a;
}

static size_t count_rapid(const rapidjson::Value &v) {
  size_t n = 1;
  if (v.IsObject())
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) n += count_rapid(m->value);
  else if (v.IsArray())
    for (auto &e : v.GetArray()) n += count_rapid(e);
  return n;
}

static size_t round_trip(unsigned seed) {
  std::mt19937 r(seed);
  json doc = make_obj(r, 0);
  std::string text = doc.dump();
  json back = json::parse(text);
  size_t n = back == doc ? text.size() : 0;
  rapidjson::Document rd;
  rd.Parse(text.c_str());
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  rd.Accept(w);
  n += count_rapid(rd) + sb.GetSize();
  std::map<std::string, json> flat;
  for (auto &[k, v] : back.items()) flat[k] = v;
  n += flat.size() + json(json::parse(back.dump(2))).size();
  return n;
}

int main(int argc, char **argv) {
  double budget = argc > 1 ? std::atof(argv[1]) : 1.5;
  size_t acc[4] = {0, 0, 0, 0};
  std::vector<std::thread> ts;
  for (int t = 1; t < 4; ++t)
    ts.emplace_back([&acc, t] { for (int i = 0; i < 300; ++i) acc[t] += round_trip(t * 100000 + i); });
  int round = 0;
  while (cpu() < budget) acc[0] += round_trip(round++);
  for (auto &t : ts) t.join();
  std::printf("%d rounds %zu %zu\n", round, acc[0], acc[1] + acc[2] + acc[3]);
  return 0;
}
