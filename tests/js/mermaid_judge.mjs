// Copyright: (c) 2026, ainet.fabric contributors
// GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
//
// The real Mermaid parser as a judge of the diagrams the collection writes (tests/unit/.../test_report_escape.py).
// Reads a JSON list of diagram texts on stdin; writes one JSON list, per diagram what Mermaid itself made of it:
// the diagram type, the configuration its directives and front matter set, and the flowchart's database
// (vertices with their label, shape, link, callback, styles and classes; edges; classDefs; subgraphs; tooltips;
// accessibility title and description), or the parser's error.
//
// The path is mermaid's own: mermaid.parse (directives, front matter, comments) and
// mermaidAPI.getDiagramFromText (the same preprocessing, entity encoding and flowchart grammar as render). A
// label is also shown as a browser would show it: mermaid's decodeEntities markers undone, then the HTML
// parsed by the DOM (jsdom), giving its text (<br> as a line break) and the elements it holds.
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!DOCTYPE html><body></body>');
// DOMPurify, which mermaid's sanitizeText calls, needs a window when its module is loaded.
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });

function shown(label) {
  if (typeof label !== 'string') return { text: label, elements: [] };
  const html = label.replaceAll('ﬂ°°', '&#').replaceAll('ﬂ°', '&').replaceAll('¶ß', ';');
  const box = document.createElement('div');
  box.innerHTML = html;
  const elements = [...box.querySelectorAll('*')].map((el) => el.tagName.toLowerCase());
  box.querySelectorAll('br').forEach((br) => br.replaceWith('\n'));
  return { text: box.textContent, elements };
}

async function judge(text) {
  let config;
  try {
    ({ config } = await mermaid.parse(text));
  } catch (error) {
    return { error: String(error && error.message ? error.message : error) };
  }
  const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
  const db = diagram.db;
  const vertices = [...db.getVertices().values()].map((v) => {
    const label = shown(v.text);
    return {
      id: v.id, type: v.type ?? null, text: label.text, elements: label.elements,
      link: v.link ?? null, linkTarget: v.linkTarget ?? null, haveCallback: Boolean(v.haveCallback),
      styles: v.styles ?? [], classes: v.classes ?? [], tooltip: db.getTooltip ? (db.getTooltip(v.id) ?? null) : null,
    };
  });
  const edges = db.getEdges().map((e) => {
    const label = shown(e.text);
    return {
      start: e.start, end: e.end, type: e.type, stroke: e.stroke, text: label.text, elements: label.elements,
      style: e.style ?? [], classes: e.classes ?? [],
    };
  });
  return {
    diagramType: diagram.type,
    config,
    direction: db.getDirection ? db.getDirection() : null,
    vertices,
    edges,
    classDefs: [...(db.getClasses ? db.getClasses() : new Map()).keys()],
    subgraphs: (db.getSubGraphs ? db.getSubGraphs() : []).map((s) => s.id),
    accTitle: db.getAccTitle ? db.getAccTitle() : '',
    accDescription: db.getAccDescription ? db.getAccDescription() : '',
  };
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const text of JSON.parse(input)) results.push(await judge(text));
process.stdout.write(JSON.stringify(results));
