#!/usr/bin/env python3
"""Turns a tmux capture with colours (capture-pane -e) into an HTML page for a screenshot."""
import html
import re
import sys

BASE = ['#1e1e1e', '#e06c75', '#98c379', '#e5c07b', '#61afef', '#c678dd', '#56b6c2', '#dcdcdc']
BRIGHT = ['#5c6370', '#ff7b86', '#b5e890', '#ffd98a', '#82c4ff', '#de9bf0', '#7fd8e4', '#ffffff']
FG, BG = '#dcdcdc', '#1e1e1e'


def color256(n):
    if n < 8:
        return BASE[n]
    if n < 16:
        return BRIGHT[n - 8]
    if n < 232:
        n -= 16
        r, g, b = n // 36, (n // 6) % 6, n % 6
        f = lambda v: 0 if v == 0 else 55 + 40 * v
        return '#%02x%02x%02x' % (f(r), f(g), f(b))
    v = 8 + 10 * (n - 232)
    return '#%02x%02x%02x' % (v, v, v)


def convert(text):
    st = dict(b=False, d=False, u=False, r=False, fg=None, bg=None)
    out, pos = [], 0

    def span():
        fg, bg = st['fg'] or FG, st['bg'] or BG
        if st['r']:
            fg, bg = bg, fg
        css = ['color:' + fg]
        if st['r'] or st['bg']:
            css.append('background:' + bg)
        if st['b']:
            css.append('font-weight:bold')
        if st['d']:
            css.append('opacity:0.6')
        if st['u']:
            css.append('text-decoration:underline')
        return '<span style="%s">' % ';'.join(css)

    out.append(span())
    for m in re.finditer(r'\x1b\[([0-9;]*)m', text):
        out.append(html.escape(text[pos:m.start()]))
        pos = m.end()
        codes = [int(c) if c else 0 for c in m.group(1).split(';')]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                st.update(b=False, d=False, u=False, r=False, fg=None, bg=None)
            elif c == 1: st['b'] = True
            elif c == 2: st['d'] = True
            elif c == 4: st['u'] = True
            elif c == 7: st['r'] = True
            elif c == 22: st['b'] = st['d'] = False
            elif c == 24: st['u'] = False
            elif c == 27: st['r'] = False
            elif 30 <= c <= 37: st['fg'] = BASE[c - 30]
            elif 90 <= c <= 97: st['fg'] = BRIGHT[c - 90]
            elif 40 <= c <= 47: st['bg'] = BASE[c - 40]
            elif c == 39: st['fg'] = None
            elif c == 49: st['bg'] = None
            elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                st['fg' if c == 38 else 'bg'] = color256(codes[i + 2])
                i += 2
            elif c in (38, 48) and i + 4 < len(codes) and codes[i + 1] == 2:
                st['fg' if c == 38 else 'bg'] = '#%02x%02x%02x' % tuple(codes[i + 2:i + 5])
                i += 4
            i += 1
        out.append('</span>' + span())
    out.append(html.escape(text[pos:]) + '</span>')
    return ''.join(out)


text = open(sys.argv[1], encoding='utf-8').read()
print('<html><body style="background:%s;margin:8px"><pre style="font-family:DejaVu Sans Mono,'
      'Noto Sans Mono CJK SC,monospace;font-size:13px;line-height:1.25;color:%s">%s</pre></body></html>'
      % (BG, FG, convert(text)))
