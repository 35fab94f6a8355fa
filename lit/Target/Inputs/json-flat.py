"""Prints a JSON file one leaf per line, `path = value` (the value as compact
JSON; a list of numbers or strings on one line), for FileCheck."""
import json
import sys


def flat(path, v):
  if isinstance(v, dict) and v:
    for k in sorted(v):
      yield from flat(f"{path}.{k}" if path else k, v[k])
  elif isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v):
    for i, x in enumerate(v):
      yield from flat(f"{path}[{i}]", x)
  else:
    yield f"{path} = {json.dumps(v)}"


with open(sys.argv[1]) as f:
  for line in flat("", json.load(f)):
    print(line)
