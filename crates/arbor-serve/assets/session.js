// arbor serve: a session's page. Without this script the page reads the same (links and
// forms); with it: a deep link's entry scrolled into view (else the branch's end, where a
// conversation goes on), the tree beside it scrolled to the same entry, earlier parts loaded
// in place (on a click, or when scrolled to the top), and the entries a growing session
// appends.
(function () {
  'use strict';
  var body = document.body;
  var conv = document.getElementById('conv');
  if (!conv) return;
  var target = body.dataset.target;
  // The outline's line of the entry in view: the deep link's, else the shown branch's end.
  function outlineLine(nav) {
    var a = target && nav.querySelector('a[href$="#' + CSS.escape(target) + '"]');
    if (a) return a.closest('li');
    var shown = nav.querySelector('li .shown');
    if (shown) return shown.closest('li');
    var on = nav.querySelectorAll('li.on');
    return on.length ? on[on.length - 1] : null;
  }
  function inView(nav, li) {
    var r = li.getBoundingClientRect();
    var n = nav.getBoundingClientRect();
    return r.bottom > n.top && r.top < n.bottom;
  }
  // Scrolls the outline (not the window) so that `li` is in its middle.
  function centre(nav, li) {
    var r = li.getBoundingClientRect();
    var n = nav.getBoundingClientRect();
    nav.scrollTop += r.top - n.top - (nav.clientHeight - r.height) / 2;
  }
  if (!location.hash) {
    var t = target && document.getElementById(target);
    if (t) t.scrollIntoView();
    else if (body.dataset.atEnd === 'true') window.scrollTo(0, document.documentElement.scrollHeight);
  }
  var nav0 = document.querySelector('nav.outline');
  var line0 = nav0 && outlineLine(nav0);
  if (line0) centre(nav0, line0);
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
  // of another agent's that grew in place, again) and draws its header and the tree beside it
  // again; a page showing an earlier part or a deep link says how many entries its branch grew
  // by, with a link to its end.
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
  // Puts the element `html` draws in place of `old`; the new element (null: nothing done).
  function swap(old, html) {
    if (!old || !html) return null;
    var box = document.createElement('div');
    box.innerHTML = html;
    var fresh = box.firstElementChild;
    if (fresh) old.replaceWith(fresh);
    return fresh;
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
    // A reader at the end of the page stays at its end (the new entries in view).
    var doc = document.documentElement;
    var following = window.scrollY + window.innerHeight >= doc.scrollHeight - 8;
    note.insertAdjacentHTML('beforebegin', d.html);
    if (following) window.scrollTo(0, doc.scrollHeight);
    // The header (title, entry count) drawn again.
    swap(document.querySelector('header.s-head'), d.head);
    // The tree beside it, drawn again: following the branch's end when its line was in view,
    // else scrolled where it was.
    var nav = document.querySelector('nav.outline');
    var line = nav && outlineLine(nav);
    var follow = line && inView(nav, line);
    var top = nav && nav.scrollTop;
    var fresh = swap(nav, d.outline);
    if (fresh) {
      var now = follow && outlineLine(fresh);
      if (now) centre(fresh, now);
      else fresh.scrollTop = top;
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
