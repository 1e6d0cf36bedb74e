"""JSON Schemas (draft 2020-12) of every command's JSON output; ``bayesrank.protocol.validate`` checks them.
Shared pieces (``diagnostics``) are referenced as ``urn:bayesrank:schema:<name>``."""
