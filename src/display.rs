//! Notebook display: pure `to_html`/`to_text` renderers and `evcxr_display` hooks.
