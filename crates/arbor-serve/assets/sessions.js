// arbor serve: the sessions page's conveniences. The page works without this script (links
// and the filters' form); it adds the next page when scrolled to the end, and new or grown
// sessions as the server's events tell of them (body[data-events]).
"use strict";
(function () {
  const rows = document.getElementById("rows");
  if (!rows) return;

  // Rows from an HTML fragment made by the server (already escaped there).
  function parse(html, tag) {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content.querySelectorAll(tag);
  }

  // The next page, when its link comes into view.
  let loading = false;
  function watchNext() {
    const next = document.querySelector("p.next a[rel=next]");
    if (!next || !("IntersectionObserver" in window)) return;
    const io = new IntersectionObserver(function (seen) {
      if (!seen.some(function (e) { return e.isIntersecting; }) || loading) return;
      loading = true;
      io.disconnect();
      const url = new URL(next.href, location.href);
      url.searchParams.set("part", "rows");
      fetch(url, { credentials: "same-origin" })
        .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
        .then(function (html) {
          const t = document.createElement("template");
          t.innerHTML = html;
          const tag = rows.tagName === "TBODY" ? "tr" : "li";
          t.content.querySelectorAll(tag).forEach(function (r) {
            const key = r.dataset.key;
            if (key && rows.querySelector("tr[data-key=\"" + CSS.escape(key) + "\"]")) return;
            rows.appendChild(r);
          });
          const old = next.closest("p.next");
          const more = t.content.querySelector("p.next");
          if (more) old.replaceWith(more); else old.remove();
          loading = false;
          watchNext();
        })
        .catch(function () { loading = false; });
    }, { rootMargin: "200px" });
    io.observe(next);
  }
  watchNext();

  // Live: a new session appears in its place (newest first), a changed one is replaced.
  const events = document.body.dataset.events;
  if (!events || !("EventSource" in window) || rows.tagName !== "TBODY") return;
  const es = new EventSource(events);
  es.addEventListener("ready", function () { document.body.dataset.live = "on"; });
  es.addEventListener("session", function (e) {
    let d;
    try { d = JSON.parse(e.data); } catch (_) { return; }
    const got = parse("<table><tbody>" + d.html + "</tbody></table>", "tr")[0];
    if (!got) return;
    const old = rows.querySelector("tr[data-key=\"" + CSS.escape(d.key) + "\"]");
    if (old) old.remove();
    let before = null;
    for (const r of rows.children) {
      if (Number(r.dataset.modified) < d.modified) { before = r; break; }
    }
    // Older than every row shown: it belongs to a later page, unless it was shown here.
    if (!before && !old && document.querySelector("p.next")) return;
    got.classList.add("fresh");
    rows.insertBefore(got, before);
    const n = Number(document.body.dataset.seen || "0") + 1;
    document.body.dataset.seen = String(n);
  });
  es.addEventListener("error", function () { document.body.dataset.live = "off"; });
})();
