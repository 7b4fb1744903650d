// bunco-pi score cards: a Print button, for phones whose menu hides printing.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("print");
  button.hidden = false;
  button.addEventListener("click", () => window.print());
});
