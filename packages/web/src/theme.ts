/**
 * Light and dark: the system's choice until the user toggles, then theirs (kept in this
 * browser's localStorage). The button says which theme it is on (aria-pressed: dark).
 */
const KEY = "parley-theme";

export class ThemeToggle {
  readonly #button: HTMLButtonElement;
  readonly #system = window.matchMedia("(prefers-color-scheme: dark)");

  constructor(button: HTMLButtonElement) {
    this.#button = button;
    button.addEventListener("click", () => {
      const dark = !this.#dark();
      try {
        localStorage.setItem(KEY, dark ? "dark" : "light");
      } catch {
        // Storage refused (private mode): the choice lasts this page.
        this.#chosen = dark ? "dark" : "light";
      }
      this.apply();
    });
    this.#system.addEventListener("change", () => this.apply());
  }

  #chosen: "dark" | "light" | undefined;

  #dark(): boolean {
    let stored: string | null = null;
    try {
      stored = localStorage.getItem(KEY);
    } catch {}
    const choice = stored === "dark" || stored === "light" ? stored : this.#chosen;
    return choice !== undefined ? choice === "dark" : this.#system.matches;
  }

  apply(): void {
    const dark = this.#dark();
    document.documentElement.dataset["theme"] = dark ? "dark" : "light";
    this.#button.setAttribute("aria-pressed", String(dark));
  }
}
