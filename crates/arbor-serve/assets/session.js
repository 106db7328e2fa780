// arbor serve: a session's page. Without this script the page reads the same (links and
// forms); with it: a deep link's entry scrolled into view, earlier parts loaded in place
// (on a click, or when scrolled to the top), and the entries a growing session appends.
(function () {
  'use strict';
  var body = document.body;
  var conv = document.getElementById('conv');
  if (!conv) return;
  var target = body.dataset.target;
  if (target && !location.hash) {
    var t = document.getElementById(target);
    if (t) t.scrollIntoView();
  }
  var loading = false;
  function earlier(a) {
    if (loading) return;
    loading = true;
    var p = a.closest('p');
    fetch(a.dataset.part, { credentials: 'same-origin' }).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.text();
    }).then(function (html) {
      var before = document.documentElement.scrollHeight;
      p.insertAdjacentHTML('afterend', html);
      p.remove();
      window.scrollBy(0, document.documentElement.scrollHeight - before);
      watchTop();
    }).catch(function () { /* the link still works */ }).finally(function () { loading = false; });
  }
  conv.addEventListener('click', function (ev) {
    var a = ev.target.closest('p.earlier a[data-part]');
    if (!a) return;
    ev.preventDefault();
    earlier(a);
  });
  var observer = 'IntersectionObserver' in window ? new IntersectionObserver(function (es) {
    es.forEach(function (e) {
      if (e.isIntersecting && window.scrollY > 0) earlier(e.target);
    });
  }) : null;
  function watchTop() {
    if (!observer) return;
    observer.disconnect();
    var a = conv.querySelector('p.earlier a[data-part]');
    if (a) observer.observe(a);
  }
  watchTop();
  // Live: only a page that shows the end of its branch appends.
  if (body.dataset.atEnd !== 'true' || !window.EventSource) return;
  var note = document.getElementById('live-note');
  var url = '/session/' + encodeURIComponent(body.dataset.session) + '/events?leaf=' +
    encodeURIComponent(body.dataset.leaf) + '&len=' + encodeURIComponent(body.dataset.len);
  var es = new EventSource(url);
  es.addEventListener('entries', function (ev) {
    var d = JSON.parse(ev.data);
    note.insertAdjacentHTML('beforebegin', d.html);
    body.dataset.leaf = d.leaf;
    body.dataset.len = d.len;
  });
  es.addEventListener('notice', function (ev) {
    var d = JSON.parse(ev.data);
    note.textContent = d.text + ' ';
    var a = document.createElement('a');
    a.href = d.href;
    a.textContent = 'Reload';
    note.appendChild(a);
    note.hidden = false;
    es.close();
  });
})();
