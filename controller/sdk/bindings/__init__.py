"""pyangbind bindings of the five CATS modules (``python -m tools.sdk_generate``).

One module per YANG module (``ietf_cats_service_metrics`` for ietf-cats-service-metrics). Do not
edit: change the YANG module and regenerate. A test checks that these files are current.
"""
