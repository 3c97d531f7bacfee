"""The production-log contract (agent-session record, schema v1 and v2): one spec, every form derived from it.

spec.SPECS                  the source of truth (v2: messages in the OpenAI chat-completions shape)
trajectory                  how v2 messages must follow each other (tool calls answered, in order)
json_schema                 -> agent_session.schema.json (`python -m postgame.contract` regenerates it)
check.check_record          the fast per-line checker used by ingest
arrow.arrow_schema          the Parquet schema of snapshots (+ unknown fields, lineage), one layout per version
gx.contract_expectations    the Great Expectations suite used by validate
"""

from postgame.contract.arrow import arrow_schema, to_record, unknown_fields
from postgame.contract.check import ContractViolation, check_record
from postgame.contract.spec import AGENT_SESSION, SCHEMA_VERSION

__all__ = [
    "AGENT_SESSION",
    "SCHEMA_VERSION",
    "ContractViolation",
    "arrow_schema",
    "check_record",
    "to_record",
    "unknown_fields",
]
