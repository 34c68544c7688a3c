"""Stand-in for SONiC's `sonic-cfggen -d --print-data` (push tests): prints the JSON file $SONIC_STANDIN_DB."""
import os
import sys

if sys.argv[1:] != ["-d", "--print-data"]:
    sys.exit("stand-in sonic-cfggen: only -d --print-data")
with open(os.environ["SONIC_STANDIN_DB"]) as handle:
    sys.stdout.write(handle.read())
