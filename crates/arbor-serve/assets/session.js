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
  // Live: a page showing the end of its branch shows what the session appends (and an entry
  // of another agent's that grew in place, again) and draws the tree beside it again; a page
  // showing an earlier part or a deep link says how many entries its branch grew by, with a
  // link to its end.
  if (!window.EventSource || !body.dataset.after) return;
  var note = document.getElementById('live-note');
  var atEnd = body.dataset.atEnd === 'true';
  var url = '/session/' + encodeURIComponent(body.dataset.session) + '/events?leaf=' +
    encodeURIComponent(body.dataset.after) + '&len=' + encodeURIComponent(body.dataset.len) +
    '&version=' + encodeURIComponent(body.dataset.version || '') + (atEnd ? '' : '&count=1');
  var es = new EventSource(url);
  es.addEventListener('open', function () { body.dataset.live = 'on'; });
  function say(text, href, label) {
    note.textContent = text + ' — ';
    var a = document.createElement('a');
    a.href = href;
    a.textContent = label;
    note.appendChild(a);
    note.hidden = false;
  }
  es.addEventListener('entries', function (ev) {
    var d = JSON.parse(ev.data);
    // What the page showed after the entry it went on after (another agent's title) goes:
    // the event sends it again after the new entries; that entry too when it changed.
    var sec = document.getElementById(d.from);
    if (sec && sec.parentNode === conv) {
      var n = sec.nextElementSibling;
      if (n && n.classList.contains('etools')) n = n.nextElementSibling;
      while (n && n !== note) {
        var next = n.nextElementSibling;
        n.remove();
        n = next;
      }
      if (d.replace) {
        var t = sec.nextElementSibling;
        if (t && t.classList.contains('etools')) t.remove();
        sec.remove();
      }
    }
    note.insertAdjacentHTML('beforebegin', d.html);
    // The tree beside it, drawn again; scrolled where it was (at its end when it was there).
    var nav = document.querySelector('nav.outline');
    if (nav && d.outline) {
      var atBottom = nav.scrollTop + nav.clientHeight >= nav.scrollHeight - 2;
      var top = nav.scrollTop;
      var box = document.createElement('div');
      box.innerHTML = d.outline;
      var fresh = box.firstElementChild;
      if (fresh) {
        nav.replaceWith(fresh);
        fresh.scrollTop = atBottom ? fresh.scrollHeight : top;
      }
    }
    body.dataset.after = d.after;
    body.dataset.version = d.version;
    body.dataset.leaf = d.leaf;
    body.dataset.len = d.len;
  });
  es.addEventListener('grew', function (ev) {
    var d = JSON.parse(ev.data);
    note.classList.add('grew');
    say(d.text, d.href, 'go to the end');
  });
  es.addEventListener('notice', function (ev) {
    var d = JSON.parse(ev.data);
    say(d.text, d.href, 'Reload');
    es.close();
  });
})();
