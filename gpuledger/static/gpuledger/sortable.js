// Click a column header of a table.data to sort it; numbers sort by their data-sort value.
document.querySelectorAll("table.data").forEach((table) => {
  table.querySelectorAll("th").forEach((th, index) => {
    th.addEventListener("click", () => {
      const body = table.tBodies[0];
      const ascending = !th.classList.contains("sorted-asc");
      table.querySelectorAll("th").forEach((h) => h.classList.remove("sorted-asc", "sorted-desc"));
      th.classList.add(ascending ? "sorted-asc" : "sorted-desc");
      const key = (row) => {
        const cell = row.cells[index];
        const raw = cell.dataset.sort ?? cell.textContent.trim();
        const number = parseFloat(raw);
        return raw === "" ? null : (isNaN(number) ? raw.toLowerCase() : number);
      };
      const rows = Array.from(body.rows);
      rows.sort((a, b) => {
        const x = key(a), y = key(b);
        if (x === null) return 1; if (y === null) return -1;  // missing values always last
        return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
      });
      rows.forEach((row) => body.appendChild(row));
    });
  });
});
