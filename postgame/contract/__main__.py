"""Regenerate the shipped forms of the contract from the spec (the JSON Schema and the GX suites):

python -m postgame.contract
"""

from postgame.contract import gx, json_schema

for written in (json_schema.write(), gx.write()):
    print(f"wrote {written}")
