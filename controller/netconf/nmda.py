"""NMDA operations (RFC 8526 3): get-data and edit-data on any datastore."""

from __future__ import annotations

from lxml import etree

from controller.datastore.api import (
    Content,
    DatastoreName,
    EditOperation,
    ServerCore,
    WithDefaults,
)
from controller.netconf.apply import missing_ancestors
from controller.netconf.edits import ConfigEdits
from controller.netconf.errors import bad_element, netconf_error
from controller.netconf.outcome import Caller, Outcome, with_defaults_of
from controller.netconf.reads import Filter, Reads, xpath_with_modules
from controller.types import Element

NMDA_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-nmda"
DATASTORES_NS = "urn:ietf:params:xml:ns:yang:ietf-datastores"
_N = f"{{{NMDA_NS}}}"
_CONFIG_FILTER = {"true": Content.CONFIG, "false": Content.NONCONFIG}


def datastore_identity(operation: Element) -> DatastoreName:
    """The ``datastore`` identityref (``ds:running``, its prefix bound in the document)."""
    holder = operation.find(_N + "datastore")
    if holder is None:
        raise bad_element("missing-element", "datastore", "the datastore is required")
    prefix, _, name = (holder.text or "").strip().rpartition(":")
    namespace = holder.nsmap.get(prefix or None)
    try:
        if namespace == DATASTORES_NS:
            return DatastoreName(name)
    except ValueError:
        pass
    raise bad_element("invalid-value", "datastore", f"no datastore {holder.text!r}")


class Nmda:
    """get-data and edit-data over the same reads and edit conversion as the base operations."""

    def __init__(self, core: ServerCore, reads: Reads, config: ConfigEdits) -> None:
        self._core = core
        self._reads = reads
        self._config = config

    def get_data(self, caller: Caller, operation: Element) -> Outcome:
        """RFC 8526 3.1."""
        datastore = datastore_identity(operation)
        content = Content.ALL
        raw = operation.findtext(_N + "config-filter")
        if raw is not None:
            if raw.strip() not in _CONFIG_FILTER:
                raise bad_element("invalid-value", "config-filter", "config-filter is a boolean")
            content = _CONFIG_FILTER[raw.strip()]
        if datastore is not DatastoreName.OPERATIONAL and content is Content.ALL:
            content = Content.CONFIG
        for unsupported in ("origin-filter", "negated-origin-filter"):
            if operation.find(_N + unsupported) is not None:
                raise netconf_error("operation-not-supported", f"{unsupported} is not served")
        depth = operation.findtext(_N + "max-depth")
        with_origin = operation.find(_N + "with-origin") is not None
        if with_origin and datastore is not DatastoreName.OPERATIONAL:
            raise bad_element("invalid-value", "with-origin", "origin is for operational only")
        self._core.consistent(datastore)  # a cluster: this replica has every commit (cluster.md)
        data = self._reads.read(
            datastore,
            caller.principal,
            content=content,
            filter_=self._filter(operation),
            with_defaults=_with_defaults(operation),
            with_origin=with_origin,
            depth=int(depth) if depth and depth.strip().isdigit() else None,
        )
        holder = etree.Element(_N + "data", nsmap={None: NMDA_NS})
        for element in data:
            holder.append(element)
        return Outcome((holder,))

    def edit_data(self, caller: Caller, operation: Element) -> Outcome:
        """RFC 8526 3.2."""
        datastore = datastore_identity(operation)
        if datastore is DatastoreName.OPERATIONAL:
            raise bad_element("invalid-value", "datastore", "operational is not writable")
        raw = (operation.findtext(_N + "default-operation") or "merge").strip()
        defaults = {"merge": EditOperation.MERGE, "replace": EditOperation.REPLACE, "none": None}
        if raw not in defaults:
            raise bad_element("invalid-value", "default-operation", f"bad value {raw!r}")
        config = operation.find(_N + "config")
        if config is None:
            raise bad_element("missing-element", "config", "edit-data needs config")
        edits = self._config.edits(config, defaults[raw])
        self._core.consistent(datastore)  # a cluster: from every commit acknowledged before it
        if raw == "none":  # as edit-config's (RFC 8526 3.2, RFC 6241 7.2)
            levels = self._config.levels(config)
            missing_ancestors(self._core, datastore, edits, caller.principal, levels)
        if edits:
            self._core.edit(datastore, edits, caller.principal, session=caller.session)
        return Outcome()

    @staticmethod
    def _filter(operation: Element) -> Filter | None:
        subtree = operation.find(_N + "subtree-filter")
        if subtree is not None:
            return Filter(subtree=tuple(c for c in subtree if isinstance(c.tag, str)))
        xpath = operation.find(_N + "xpath-filter")
        if xpath is not None:
            return Filter(xpath=xpath_with_modules(xpath.text or "", xpath.nsmap, lambda _: None))
        return None


def _with_defaults(operation: Element) -> WithDefaults | None:
    holder = operation.find(_N + "with-defaults")
    if holder is None:
        return with_defaults_of(operation)
    try:
        return WithDefaults((holder.text or "").strip())
    except ValueError as exc:
        raise bad_element("invalid-value", "with-defaults", "bad with-defaults") from exc
