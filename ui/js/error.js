// Shows the start-up failure the shell put in the URL fragment. No IPC: this window has none.
document.getElementById("message").textContent = decodeURIComponent(location.hash.slice(1));
