"""Stand-in for SONiC's `config apply-patch FILE` (push tests): applies an RFC 6902 patch (add, replace, remove)
to the JSON file $SONIC_STANDIN_DB and logs each patch to $SONIC_STANDIN_DB.patches."""
import json
import os
import sys

if sys.argv[1:2] != ["apply-patch"] or len(sys.argv) != 3:
    sys.exit("stand-in config: only apply-patch FILE")
db_path = os.environ["SONIC_STANDIN_DB"]
with open(db_path) as handle:
    db = json.load(handle)
with open(sys.argv[2]) as handle:
    patch = json.load(handle)
for op in patch:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
    parent = db
    for part in parts[:-1]:
        parent = parent[part]
    if op["op"] in ("add", "replace"):
        if op["op"] == "replace" and parts[-1] not in parent:
            sys.exit("Error: replace of a missing path %s" % op["path"])
        parent[parts[-1]] = op["value"]
    elif op["op"] == "remove":
        del parent[parts[-1]]
    else:
        sys.exit("Error: unsupported op %s" % op["op"])
with open(db_path, "w") as handle:
    json.dump(db, handle)
with open(db_path + ".patches", "a") as handle:
    handle.write(json.dumps(patch) + "\n")
print("Patch applied successfully.")
