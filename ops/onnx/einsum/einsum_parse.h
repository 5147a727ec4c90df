// einsum_parse.h — parsing of an Einsum equation for inputs of given ranks (shared by the reference
// and the CUDA tactic): labels per input axis (ellipsis axes numbered from kEllipsisBase) and the
// output labels (explicit, or the implicit ellipsis-then-alphabetical order).
#pragma once

#include <algorithm>
#include <map>

#include "../common/util.h"

namespace opforge::ops {

inline constexpr int kEllipsisBase = 100;

struct Parsed {
  std::vector<std::vector<int>> in;  // labels per input axis
  std::vector<int> out;
};

inline int labelOf(char ch) {
  return ch >= 'a' && ch <= 'z' ? ch - 'a' : ch >= 'A' && ch <= 'Z' ? 26 + ch - 'A' : -1;
}

// Parses the equation for inputs of the given ranks.
inline Result<Parsed> parseEinsum(std::string eq, const std::vector<int>& ranks) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t s = 0;;) {
    const size_t comma = lhs.find(',', s);
    terms.push_back(lhs.substr(s, comma == std::string::npos ? std::string::npos : comma - s));
    if (comma == std::string::npos) break;
    s = comma + 1;
  }
  if (terms.size() != ranks.size())
    return Status::invalid("equation '" + eq + "' has " + std::to_string(terms.size()) +
                           " input terms for " + std::to_string(ranks.size()) + " inputs");
  Parsed p;
  int ell = 0;  // axes the ellipsis stands for (the most of any input)
  std::vector<std::pair<std::vector<int>, int>>
      split;  // letters with -1 at the ellipsis, ellipsis size
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<int> labels;
    int letters = 0;
    bool has_ell = false;
    const std::string& t = terms[i];
    for (size_t j = 0; j < t.size(); ++j) {
      if (t.compare(j, 3, "...") == 0) {
        if (has_ell) return Status::invalid("term '" + t + "' has two ellipses");
        has_ell = true;
        labels.push_back(-1);
        j += 2;
        continue;
      }
      const int l = labelOf(t[j]);
      if (l < 0)
        return Status::invalid("equation '" + eq + "': '" + std::string(1, t[j]) +
                               "' is not a letter");
      labels.push_back(l);
      ++letters;
    }
    const int e = ranks[i] - letters;
    if (e < 0 || (!has_ell && e != 0))
      return Status::invalid("term '" + t + "' has " + std::to_string(letters) +
                             " labels for an input of rank " + std::to_string(ranks[i]));
    ell = std::max(ell, e);
    split.emplace_back(labels, e);
  }
  for (auto& [labels, e] : split) {
    std::vector<int> axes;
    for (int l : labels) {
      if (l >= 0) {
        axes.push_back(l);
        continue;
      }
      for (int j = 0; j < e; ++j) axes.push_back(kEllipsisBase + ell - e + j);
    }
    p.in.push_back(axes);
  }
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    for (size_t j = 0; j < rhs.size(); ++j) {
      if (rhs.compare(j, 3, "...") == 0) {
        for (int k = 0; k < ell; ++k) p.out.push_back(kEllipsisBase + k);
        j += 2;
        continue;
      }
      const int l = labelOf(rhs[j]);
      if (l < 0)
        return Status::invalid("equation '" + eq + "': '" + std::string(1, rhs[j]) +
                               "' is not a letter");
      bool used = false;
      for (const auto& in : p.in) used = used || std::find(in.begin(), in.end(), l) != in.end();
      if (!used)
        return Status::invalid("output label '" + std::string(1, rhs[j]) + "' appears in no input");
      p.out.push_back(l);
    }
  } else {
    for (int k = 0; k < ell; ++k) p.out.push_back(kEllipsisBase + k);
    std::map<int, int> count;
    for (const auto& in : p.in)
      for (int l : in)
        if (l < kEllipsisBase) ++count[l];
    for (const auto& [l, n] : count)
      if (n == 1) p.out.push_back(l);
  }
  return p;
}

}  // namespace opforge::ops
