"""The type names the whole project shares, each defined here once.

Identifier strings get names (``NewType``) where mixing two of them up would be a bug: a CS-ID
passed as a CSCI-ID, a schema path passed as a data path. The enums of the YANG identities
stay with the logic that speaks them (:mod:`controller.selection.joint.vocabulary`,
:mod:`controller.selection.mapping.vocabulary`). This module imports only the standard library,
so every layer, the pure selection core and the agents included, can use it.
"""

from __future__ import annotations

from typing import Any, NewType

# ---------------------------------------------------------------- CATS identifiers

CsId = NewType("CsId", str)
"""CATS Service Identifier (service-metrics-op 6.2.1)."""
CsciId = NewType("CsciId", str)
"""Service Contact Instance locator, for example ``188.3.67.4:69`` (service-metrics-op 6.2.1)."""
ForwarderId = NewType("ForwarderId", str)
"""Ingress or Egress CATS-Forwarder identifier (service-metrics-op 6.2.2)."""
SessionId = NewType("SessionId", str)
"""cats-t:session-id: a client or agent session (affinity key, agent draft 7.1)."""
TenantId = NewType("TenantId", str)
"""tenant-id: the tenant that scopes reuse keys (agent draft 7.1, 15)."""
ReuseKey = NewType("ReuseKey", str)
"""reuse-key: opaque state handle, compared for equality only (agent draft 3, 7.5)."""
RegionId = NewType("RegionId", str)
"""region-id: a region of a locality or governance constraint (agent draft 7.1)."""
SourceId = NewType("SourceId", str)
"""cats-t:source-id: the component that asserted a value (agent draft 7.4)."""
TierName = NewType("TierName", str)
"""tier-name: a capability tier of the operator's catalogue (agent draft 7.1, 7.2)."""
Prefix = NewType("Prefix", str)
"""inet:ip-prefix of a tool or data endpoint, or of a topology node (agent draft 7.2)."""
CommitmentId = NewType("CommitmentId", str)
"""cats-t:commitment-id: one commitment, the key of its steering rule (agent draft 6.5)."""
ReservationId = NewType("ReservationId", str)
"""reservation-id of a reserve-state exchange (agent draft 9.1 MSG-11)."""

# ---------------------------------------------------------------- YANG paths

DataPath = NewType("DataPath", str)
"""A data path in libyang's form: ``/module:node/list[key='value']`` (``/`` is the root)."""
SchemaPath = NewType("SchemaPath", str)
"""A schema node path without predicates: ``/module:rpc``, ``/module:node/child``."""

# ---------------------------------------------------------------- documents

Json = dict[str, Any]
"""An RFC 7951 JSON object as ``json`` decodes it."""
Element = Any
"""An lxml element (``lxml.etree._Element``; lxml ships no type information)."""
