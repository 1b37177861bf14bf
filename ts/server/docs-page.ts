/**
 * The API docs page: static HTML that renders `/v1/openapi.json` in the browser with a few lines
 * of script, so it works on an air-gapped machine (no CDN).
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Cairn API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}
h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
code,pre{font:13px ui-monospace,monospace;background:#f5f5f5}
pre{padding:.6rem;overflow:auto;border-radius:4px}
.m{display:inline-block;min-width:4.5rem;font-weight:600;text-transform:uppercase}
details{margin:.3rem 0}
</style></head>
<body><h1>Cairn HTTP API</h1>
<p>Send <code>Authorization: Bearer &lt;token&gt;</code>. Errors are <code>{"error":{code,message,details}}</code>.
The raw document is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
<div id="api">Loading…</div>
<script>
const el = (tag, text) => { const e = document.createElement(tag); if (text) e.textContent = text; return e; };
fetch('/v1/openapi.json').then((r) => r.json()).then((doc) => {
  const root = document.getElementById('api');
  root.textContent = '';
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!op) continue;
      const h = el('h2'); const m = el('span', method); m.className = 'm'; h.append(m, el('code', path));
      root.append(h, el('p', op.summary || ''));
      if (op.description) root.append(el('p', op.description));
      // A body or reply in any media type (the import route reads JSON lines); a $ref shows its component.
      const shown = (content) => {
        const media = Object.values(content || {})[0];
        const schema = media && media.schema;
        if (!schema) return null;
        const ref = typeof schema.$ref === 'string' ? schema.$ref.split('/').pop() : null;
        return JSON.stringify(ref ? { [ref]: doc.components.schemas[ref] } : schema, null, 2);
      };
      for (const [label, content] of [
        ['Request body schema', op.requestBody && op.requestBody.content],
        ['Reply schema (200)', op.responses && op.responses['200'] && op.responses['200'].content],
      ]) {
        const text = shown(content);
        if (text === null) continue;
        const d = el('details'); d.append(el('summary', label)); d.append(el('pre', text));
        root.append(d);
      }
      const other = Object.entries(op.responses || {}).filter(([s]) => s !== '200');
      if (other.length > 0) {
        const d = el('details'); d.append(el('summary', 'Other statuses: ' + other.map(([s]) => s).join(', ')));
        for (const [s, r] of other) d.append(el('p', s + ' — ' + (r.description || '')));
        root.append(d);
      }
    }
  }
}).catch((e) => { document.getElementById('api').textContent = 'Could not load the API: ' + e; });
</script></body></html>
`;
