"""Stand-in for SONiC's `sonic-cfggen -d --print-data` (push and lossless-check tests): prints the JSON file
$SONIC_STANDIN_DB; each call is logged as a line to $SONIC_STANDIN_LOG when that is set."""
import os
import sys

if sys.argv[1:] != ["-d", "--print-data"]:
    sys.exit("stand-in sonic-cfggen: only -d --print-data")
if os.environ.get("SONIC_STANDIN_LOG"):
    with open(os.environ["SONIC_STANDIN_LOG"], "a") as log:
        log.write(" ".join(sys.argv[1:]) + "\n")
with open(os.environ["SONIC_STANDIN_DB"]) as handle:
    sys.stdout.write(handle.read())
