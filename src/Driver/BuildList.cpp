//===- BuildList.cpp - The job list of `pallasc build` ---------*- C++ -*-===//

#include "src/Driver/BuildList.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>

#include <sys/stat.h>

namespace pallasc {

namespace {

using json = nlohmann::json;

/// A JSON value quoted for a message, at most 60 characters of it.
std::string quote(const json &v) {
  std::string s =
      v.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

const char *typeName(const json &v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "a number";
  }
}

std::string resolve(const std::string &baseDir, const std::string &path) {
  if (path.empty() || path[0] == '/' || path == "-" || baseDir.empty())
    return path;
  return baseDir + (baseDir.back() == '/' ? "" : "/") + path;
}

class EntryParser {
public:
  EntryParser(const std::string &baseDir, std::vector<spec::SpecError> &errors)
      : baseDir(baseDir), errors(errors) {}

  void error(const std::string &path, const std::string &message) {
    errors.push_back({path, message, 0, 0});
  }

  /// A non-empty string member; absent: "" (error when `required`).
  std::optional<std::string> string(const json &entry, const std::string &at,
                                    const char *key, bool required) {
    auto it = entry.find(key);
    if (it == entry.end()) {
      if (required)
        error(at, std::string("missing \"") + key + "\" (expected a path)");
      return std::nullopt;
    }
    if (!it->is_string() || it->get_ref<const std::string &>().empty()) {
      error(at + "." + key, std::string("expected a non-empty string, got ") +
                                (it->is_string() ? "\"\"" : typeName(*it)));
      return std::nullopt;
    }
    return it->get<std::string>();
  }

  /// An array of non-empty strings; absent: nullopt.
  std::optional<std::vector<std::string>> strings(const json &entry,
                                                  const std::string &at,
                                                  const char *key,
                                                  bool nonEmpty) {
    auto it = entry.find(key);
    if (it == entry.end())
      return std::nullopt;
    std::string path = at + "." + key;
    if (!it->is_array()) {
      error(path,
            std::string("expected an array of strings, got ") + typeName(*it));
      return std::nullopt;
    }
    if (nonEmpty && it->empty()) {
      error(path, "expected at least one entry");
      return std::nullopt;
    }
    std::vector<std::string> out;
    bool ok = true;
    for (size_t i = 0; i < it->size(); ++i) {
      const json &v = (*it)[i];
      if (!v.is_string() || v.get_ref<const std::string &>().empty()) {
        error(path + "[" + std::to_string(i) + "]",
              std::string("expected a non-empty string, got ") +
                  (v.is_string() ? "\"\"" : quote(v)));
        ok = false;
        continue;
      }
      out.push_back(v.get<std::string>());
    }
    if (!ok)
      return std::nullopt;
    return out;
  }

  /// "transforms": the spec's transform objects, as the command-line flags
  /// that append the same transforms (`{"vmap": {"in_axes": [0, null],
  /// "axis_size": 4}}` is `--vmap 0,none:4`).
  std::optional<std::vector<std::string>>
  transformFlags(const json &entry, const std::string &at) {
    auto it = entry.find("transforms");
    if (it == entry.end())
      return std::vector<std::string>{};
    std::string path = at + ".transforms";
    if (!it->is_array()) {
      error(path, std::string("expected an array of transform objects, got ") +
                      typeName(*it));
      return std::nullopt;
    }
    std::vector<std::string> flags;
    size_t before = errors.size();
    for (size_t i = 0; i < it->size(); ++i) {
      const json &t = (*it)[i];
      std::string tpath = path + "[" + std::to_string(i) + "]";
      if (!t.is_object() || t.size() != 1 || !t.begin()->is_object()) {
        error(tpath, "expected an object with one key naming the transform "
                     "(vmap, jvp, dce, discharge_state, hi_to_lo) and its "
                     "parameters as an object, got " +
                         quote(t));
        continue;
      }
      const std::string &name = t.begin().key();
      const json &body = t.begin().value();
      std::string bpath = tpath + "." + name;
      auto onlyKeys = [&](std::initializer_list<const char *> keys) {
        for (auto k = body.begin(); k != body.end(); ++k)
          if (std::find_if(keys.begin(), keys.end(), [&](const char *key) {
                return k.key() == key;
              }) == keys.end())
            error(bpath, "unknown key " + quote(json(k.key())));
      };
      if (name == "vmap") {
        onlyKeys({"in_axes", "axis_size"});
        auto axes = body.find("in_axes");
        auto size = body.find("axis_size");
        if (axes == body.end() || !axes->is_array()) {
          error(bpath + ".in_axes", "expected an array of non-negative "
                                    "integers and nulls");
          continue;
        }
        // A symbol expression ("b") is checked against the spec's symbols
        // by the job's --vmap flag.
        bool symbolic = size != body.end() && size->is_string() &&
                        !size->get<std::string>().empty() &&
                        size->get<std::string>().find(':') ==
                            std::string::npos;
        if (!symbolic && (size == body.end() || !size->is_number_integer() ||
                          size->get<int64_t>() < 1)) {
          error(bpath + ".axis_size",
                "expected a positive integer or a symbol expression");
          continue;
        }
        std::string spelled;
        bool ok = true;
        for (size_t a = 0; a < axes->size(); ++a) {
          const json &axis = (*axes)[a];
          if (axis.is_null()) {
            spelled += std::string(a ? "," : "") + "none";
          } else if (axis.is_number_integer() && axis.get<int64_t>() >= 0) {
            spelled += (a ? "," : "") + std::to_string(axis.get<int64_t>());
          } else {
            error(bpath + ".in_axes[" + std::to_string(a) + "]",
                  "expected a non-negative integer axis or null, got " +
                      quote(axis));
            ok = false;
          }
        }
        if (ok && !axes->empty()) {
          flags.push_back("--vmap=" + spelled + ":" +
                          (symbolic ? size->get<std::string>()
                                    : std::to_string(size->get<int64_t>())));
        } else if (ok) {
          error(bpath + ".in_axes", "expected at least one axis");
        }
      } else if (name == "dce") {
        onlyKeys({"used_outputs"});
        auto used = body.find("used_outputs");
        if (used == body.end() || !used->is_array() || used->empty() ||
            !std::all_of(used->begin(), used->end(),
                         [](const json &b) { return b.is_boolean(); })) {
          error(bpath + ".used_outputs", "expected a non-empty array of "
                                         "booleans");
          continue;
        }
        std::string mask;
        for (const json &b : *used)
          mask += std::string(mask.empty() ? "" : ",") +
                  (b.get<bool>() ? "1" : "0");
        flags.push_back("--used-outputs=" + mask);
      } else if (name == "jvp" || name == "discharge_state" ||
                 name == "hi_to_lo") {
        onlyKeys({});
        flags.push_back(name == "jvp"               ? "--jvp"
                        : name == "discharge_state" ? "--discharge-state"
                                                    : "--hi-to-lo");
      } else {
        error(tpath, "unknown transform " + quote(json(name)) +
                         "; expected vmap, jvp, dce, discharge_state or "
                         "hi_to_lo");
      }
    }
    if (errors.size() != before)
      return std::nullopt;
    return flags;
  }

  void parse(const json &entry, size_t index,
             std::vector<BuildListEntry> &entries) {
    std::string at = "[" + std::to_string(index) + "]";
    if (!entry.is_object()) {
      error(at, std::string("expected an object {\"kernel\", \"spec\", "
                            "\"targets\", ...}, got ") +
                    typeName(entry));
      return;
    }
    static const std::set<std::string> known = {
        "kernel",  "spec", "targets",    "name",
        "out_dir", "emit", "transforms", "flags"};
    size_t before = errors.size();
    for (auto it = entry.begin(); it != entry.end(); ++it)
      if (!known.count(it.key()))
        error(at, "unknown key " + quote(json(it.key())) +
                      " (expected kernel, spec, targets, name, out_dir, "
                      "emit, transforms or flags)");
    BuildListEntry e;
    e.path = at;
    auto kernel = string(entry, at, "kernel", true);
    auto specPath = string(entry, at, "spec", true);
    auto name = string(entry, at, "name", false);
    auto outDir = string(entry, at, "out_dir", false);
    auto targets = strings(entry, at, "targets", /*nonEmpty=*/true);
    auto emit = strings(entry, at, "emit", /*nonEmpty=*/false);
    auto flags = strings(entry, at, "flags", /*nonEmpty=*/false);
    auto transforms = transformFlags(entry, at);
    if (name && !spec::isIdentifier(*name))
      error(at + ".name", "expected an identifier (a letter or _, then "
                          "letters, digits, _, $ or .), got " +
                              quote(json(*name)));
    if (errors.size() != before)
      return;
    for (auto [key, value] : {std::pair{"kernel", kernel}, {"spec", specPath}})
      if (*value == "-")
        error(at + "." + key, "standard input (\"-\") cannot be an input "
                              "of a build job; give a file");
    if (errors.size() != before)
      return;
    e.kernel = resolve(baseDir, *kernel);
    e.spec = resolve(baseDir, *specPath);
    e.name = name.value_or("");
    if (outDir)
      e.outDir = resolve(baseDir, *outDir);
    e.hasTargets = targets.has_value();
    e.targets = targets.value_or(std::vector<std::string>{});
    e.hasEmit = emit.has_value();
    e.emit = emit.value_or(std::vector<std::string>{});
    e.flags = flags.value_or(std::vector<std::string>{});
    e.transformFlags = transforms.value_or(std::vector<std::string>{});
    entries.push_back(std::move(e));
  }

private:
  const std::string &baseDir;
  std::vector<spec::SpecError> &errors;
};

} // namespace

bool parseBuildList(const std::string &text, const std::string &baseDir,
                    std::vector<BuildListEntry> &entries,
                    std::vector<spec::SpecError> &errors) {
  size_t before = errors.size();
  try {
    json root;
    try {
      root = json::parse(text);
    } catch (const json::parse_error &e) {
      spec::SpecError err;
      spec::lineColumn(text, e.byte > 0 ? e.byte - 1 : 0, err.line, err.column);
      std::string what = e.what();
      if (size_t colon = what.find("syntax error"); colon != std::string::npos)
        what = what.substr(colon);
      err.message = what.substr(0, 200);
      errors.push_back(std::move(err));
      return false;
    }
    if (!root.is_array()) {
      errors.push_back({"",
                        std::string("a build list is an array of "
                                    "{\"kernel\", \"spec\", "
                                    "\"targets\", ...} objects, got ") +
                            typeName(root),
                        0, 0});
      return false;
    }
    if (root.empty()) {
      errors.push_back({"", "the build list is empty", 0, 0});
      return false;
    }
    if (root.size() > kMaxBuildListEntries) {
      errors.push_back({"",
                        "the build list has " + std::to_string(root.size()) +
                            " entries, over the limit of " +
                            std::to_string(kMaxBuildListEntries),
                        0, 0});
      return false;
    }
    EntryParser parser(baseDir, errors);
    for (size_t i = 0; i < root.size() && errors.size() - before < 20; ++i)
      parser.parse(root[i], i, entries);
  } catch (const std::exception &e) {
    errors.push_back(
        {"", std::string("invalid build list: ") + e.what(), 0, 0});
  }
  return errors.size() == before;
}

std::string peekSpecName(const std::string &path) {
  try {
    // Regular files only (a FIFO would block here), bounded like the
    // compile's own read of a spec (16 MiB).
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size > (16 << 20))
      return "";
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return "";
    std::string text;
    text.resize(static_cast<size_t>(st.st_size));
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!root.is_object())
      return "";
    for (const char *key : {"name", "kernel"}) {
      auto it = root.find(key);
      if (it != root.end() && it->is_string())
        return it->get<std::string>();
    }
  } catch (const std::exception &) {
  }
  return "";
}

} // namespace pallasc
