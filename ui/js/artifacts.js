// Artifacts: charts drawn in the chat and in the artifacts panel, each downloadable as SVG.
//
// The SVG is fetched with the token and shown through a blob URL in an <img>, where a chart's
// SVG can never run script even if a title tried to smuggle some in.

import { api, report, threadPath } from './api.js';
import { $, h, icon, replaceChildren, shortTime } from './dom.js';

const svgUrls = new Map(); // `${thread}/${artifact}` -> Promise<blob URL>

function svgUrl(threadId, artifactId) {
  const key = `${threadId}/${artifactId}`;
  if (!svgUrls.has(key)) {
    const promise = api.blob(threadPath(threadId, `/artifacts/${artifactId}/chart.svg`))
      .then((blob) => URL.createObjectURL(new Blob([blob], { type: 'image/svg+xml' })));
    promise.catch(() => svgUrls.delete(key));
    svgUrls.set(key, promise);
  }
  return svgUrls.get(key);
}

/** Charts are the `line_chart`, `bar_chart` and `pie_chart` artifacts. */
export function isChart(artifact) {
  return /chart$/.test(artifact.artifact_type || '');
}

function fileName(title, id) {
  const base = (title || `chart-${id}`).replace(/[^\p{L}\p{N} _-]+/gu, '').trim().replace(/\s+/g, '-');
  return `${base || `chart-${id}`}.svg`;
}

/** An <img> of a chart plus its download link; `withTitle` adds the caption row. */
export function chartView(threadId, artifact, className = 'chart') {
  const id = artifact.artifact_id ?? artifact.id;
  const title = artifact.title || 'Chart';
  const img = h('img', { alt: `Chart: ${title}`, loading: 'lazy' });
  const link = h('a', { class: 'chart-download', download: fileName(title, id), href: '#', 'aria-label': `Download “${title}” as SVG` }, icon('download'), 'SVG');
  svgUrl(threadId, id).then((url) => {
    img.src = url;
    link.href = url;
  }).catch((err) => {
    img.alt = `The chart “${title}” could not be loaded: ${err.message}`;
  });
  return h('figure', { class: className, dataset: { artifactId: id } }, img,
    h('figcaption', { class: 'chart-foot' }, h('span', { class: 'artifact-title' }, title), link));
}

export class ArtifactsPanel {
  constructor(app) {
    this.app = app;
    this.list = $('#artifact-list');
    this.items = [];
  }

  async load() {
    this.render(await api.get(threadPath(this.app.threadId, '/artifacts')));
  }

  render(items) {
    this.items = items;
    $('#artifacts-count').textContent = items.length ? String(items.length) : '';
    if (!items.length) {
      replaceChildren(this.list, h('li', { class: 'empty' }, 'Charts and other results the agent makes are kept here.'));
      return;
    }
    replaceChildren(this.list, items.map((a) => this.item(a)));
  }

  item(a) {
    const meta = h('div', { class: 'artifact-meta' }, h('span', {}, `turn ${a.turn_index}`), h('span', {}, shortTime(a.created_at)));
    if (isChart(a)) {
      const view = chartView(this.app.threadId, a, 'artifact-chart');
      return h('li', { dataset: { artifactId: a.id } }, view, meta);
    }
    const link = h('a', { href: '#', class: 'artifact-title' }, a.title || a.artifact_type);
    link.addEventListener('click', async (event) => {
      event.preventDefault();
      try {
        const full = await api.get(threadPath(this.app.threadId, `/artifacts/${a.id}`));
        const blob = new Blob([JSON.stringify(full, null, 2)], { type: 'application/json' });
        window.open(URL.createObjectURL(blob), '_blank', 'noopener');
      } catch (err) { report(err, 'Opening the artifact'); }
    });
    return h('li', { dataset: { artifactId: a.id } }, link, h('span', { class: 'artifact-meta' }, a.artifact_type), meta);
  }

  /** Charts of one turn, for the chat. */
  chartsOfTurn(turnIndex) {
    return this.items.filter((a) => isChart(a) && a.turn_index === turnIndex);
  }
}
