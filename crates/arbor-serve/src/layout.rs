//! The page shell every page shares: the head (the base stylesheet, the page's own
//! stylesheets and scripts: no inline script or style, the CSP allows none), the navigation,
//! and the one HTML escape (the export's).

/// Which top-level page is shown (its link is marked in the navigation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    /// The sessions list and search.
    Sessions,
    /// One session.
    Session,
    /// Usage charts.
    Usage,
    /// An error page.
    None,
}

/// Text or an attribute value in HTML: the HTML export's escape.
///
/// ```
/// assert_eq!(arbor_serve::layout::esc("<a href=\"x\">'&'"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;");
/// ```
pub fn esc(t: &str) -> String {
    arbor_view::escape_html(t)
}

/// A query string of a page's filters: `name=value` for each one given (not empty, see
/// `crate::given`), the value escaped by [`seg`], `&`-joined, in the order of `pairs`.
///
/// ```
/// let (a, b, c) = (Some("x y".to_string()), None, Some(" ".to_string()));
/// assert_eq!(arbor_serve::layout::query(&[("a", &a), ("b", &b), ("c", &c)]), "a=x%20y");
/// ```
pub fn query(pairs: &[(&str, &Option<String>)]) -> String {
    pairs
        .iter()
        .filter_map(|(k, v)| Some(format!("{k}={}", seg(crate::given(v)?))))
        .collect::<Vec<_>>()
        .join("&")
}

/// A path segment or query value of a URL: every byte but `A-Z a-z 0-9 - _ .`
/// percent-encoded (a session id, an entry id, a project's path), so that it stays one
/// segment and means itself. Escape the URL with [`esc`] too when it goes in an attribute.
///
/// ```
/// assert_eq!(arbor_serve::layout::seg("a/b c?&#"), "a%2Fb%20c%3F%26%23");
/// ```
pub fn seg(id: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A page to wrap in the shell.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// The title (escaped here).
    pub title: &'a str,
    /// The navigation entry to mark.
    pub nav: Nav,
    /// The page's own assets (names in [`crate::assets::FILES`]: `.css` are linked, `.js`
    /// loaded deferred), after `base.css`.
    pub assets: &'a [&'a str],
    /// Attributes of `<body>` the scripts read (already escaped: `data-x="…"`), or "".
    pub body_attrs: &'a str,
}

/// A whole page: the shell around `body` (HTML already made safe by its page).
pub fn page(p: Page<'_>, body: &str) -> axum::response::Html<String> {
    let link = |n: Nav, href: &str, label: &str| {
        let cur = if n == p.nav {
            " aria-current=\"page\""
        } else {
            ""
        };
        format!("<a href=\"{href}\"{cur}>{label}</a>")
    };
    // No icon: the browser would ask for /favicon.ico and log its 404 as an error.
    let mut head = String::from(
        "<link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"/assets/base.css\">",
    );
    for a in p.assets {
        if a.ends_with(".css") {
            head.push_str(&format!(
                "<link rel=\"stylesheet\" href=\"/assets/{}\">",
                esc(a)
            ));
        } else if a.ends_with(".js") {
            head.push_str(&format!(
                "<script src=\"/assets/{}\" defer></script>",
                esc(a)
            ));
        }
    }
    let attrs = if p.body_attrs.is_empty() {
        String::new()
    } else {
        format!(" {}", p.body_attrs)
    };
    axum::response::Html(format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{} · arbor</title>{head}</head>\
<body{attrs}><header class=\"top\"><a class=\"brand\" href=\"/\">arbor</a><nav>{}{}</nav></header>\n{}\n</body></html>\n",
        esc(p.title),
        link(Nav::Sessions, "/", "Sessions"),
        link(Nav::Usage, "/usage", "Usage"),
        body
    ))
}

/// A page of only a title and a body, no assets of its own.
pub fn simple(title: &str, nav: Nav, body: &str) -> axum::response::Html<String> {
    page(
        Page {
            title,
            nav,
            assets: &[],
            body_attrs: "",
        },
        body,
    )
}
