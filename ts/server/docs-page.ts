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
      if (op.requestBody) {
        const d = el('details'); d.append(el('summary', 'Request body schema'));
        d.append(el('pre', JSON.stringify(op.requestBody.content['application/json'].schema, null, 2)));
        root.append(d);
      }
    }
  }
}).catch((e) => { document.getElementById('api').textContent = 'Could not load the API: ' + e; });
</script></body></html>
`;
