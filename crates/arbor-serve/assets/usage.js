// arbor serve: the usage page's conveniences. The page works without this script (its form
// and links are plain GET); here a choice in a list shows the new view at once, and the
// tables of numbers open for printing.
"use strict";
(function () {
  var form = document.querySelector("form.filters");
  if (form) {
    form.querySelectorAll("select").forEach(function (s) {
      s.addEventListener("change", function () {
        // Empty fields are left out, so the address stays short.
        form.querySelectorAll("input, select").forEach(function (f) {
          f.disabled = f.value === "";
        });
        form.submit();
      });
    });
    // Back to this page from the browser's cache: its fields usable again.
    window.addEventListener("pageshow", function () {
      form.querySelectorAll("input, select").forEach(function (f) {
        f.disabled = false;
      });
    });
  }
  var opened = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (d) {
      d.open = true;
      opened.push(d);
    });
  });
  window.addEventListener("afterprint", function () {
    opened.forEach(function (d) { d.open = false; });
    opened = [];
  });
})();
