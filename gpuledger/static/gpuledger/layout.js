// Every page fits its window (issue 30): a table wider than its column scrolls inside its own box, never
// the page. Pages that already wrap a table in .table-scroll keep theirs; this wraps every other
// table.data, so no page template has to. Without JavaScript, site.css's phone rule still scrolls them.
(function () {
  "use strict";
  document.querySelectorAll("table.data").forEach(function (table) {
    if (table.parentElement && table.parentElement.classList.contains("table-scroll")) return;
    var box = document.createElement("div");
    box.className = "table-scroll";
    table.parentNode.insertBefore(box, table);
    box.appendChild(table);
  });
})();
