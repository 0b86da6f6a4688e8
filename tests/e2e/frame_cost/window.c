// One transparent, undecorated WebKitGTK window the size of a character window (220x300 unless
// W/H say otherwise), with the same settings YUI's windows have, loading one HTML file. It is the
// bare engine under YUI: frame_cost.py measures what a frame costs here and in the real app
// (docs/PERFORMANCE.md, "Idle CPU"). Not part of CI.
// Usage: window PAGE.html. Env: W, H, BASE (base URI, default file:///), BG_ALPHA (the view's
// background alpha, 0), FEATURES ("Name=0,Other=1": WebKit feature flags, webkit_settings_set_feature_enabled).
#include <webkit2/webkit2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Like tao's transparent windows: the toplevel is cleared before the web view draws.
static gboolean clear_window(GtkWidget *w, cairo_t *cr, gpointer data)
{
    cairo_set_source_rgba(cr, 0, 0, 0, 0);
    cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
    cairo_paint(cr);
    return FALSE;
}

static void set_features(WebKitSettings *settings, const char *spec)
{
    WebKitFeatureList *all = webkit_settings_get_all_features();
    gsize n = webkit_feature_list_get_length(all);
    char *copy = strdup(spec);
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = 0;
        int found = 0;
        for (gsize i = 0; i < n; i++) {
            WebKitFeature *f = webkit_feature_list_get(all, i);
            if (!strcmp(webkit_feature_get_identifier(f), tok)) {
                webkit_settings_set_feature_enabled(settings, f, atoi(eq + 1));
                found = 1;
            }
        }
        fprintf(stderr, "feature %s=%s: %s\n", tok, eq + 1, found ? "set" : "unknown");
    }
    free(copy);
    webkit_feature_list_unref(all);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: window PAGE.html\n");
        return 2;
    }
    gtk_init(&argc, &argv);
    GtkWidget *win = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    const char *w = getenv("W"), *h = getenv("H");
    gtk_window_set_default_size(GTK_WINDOW(win), w ? atoi(w) : 220, h ? atoi(h) : 300);
    gtk_window_set_decorated(GTK_WINDOW(win), FALSE);
    GdkVisual *rgba = gdk_screen_get_rgba_visual(gtk_widget_get_screen(win));
    if (rgba)
        gtk_widget_set_visual(win, rgba);
    gtk_widget_set_app_paintable(win, TRUE);
    g_signal_connect(win, "draw", G_CALLBACK(clear_window), NULL);

    WebKitWebView *view = WEBKIT_WEB_VIEW(webkit_web_view_new());
    WebKitSettings *settings = webkit_web_view_get_settings(view);
    // The page imports YUI's character module from the work tree.
    webkit_settings_set_allow_file_access_from_file_urls(settings, TRUE);
    webkit_settings_set_allow_universal_access_from_file_urls(settings, TRUE);
    const char *features = getenv("FEATURES");
    if (features && *features)
        set_features(settings, features);
    const char *alpha = getenv("BG_ALPHA");
    GdkRGBA background = { 0, 0, 0, alpha ? atof(alpha) : 0 };
    webkit_web_view_set_background_color(view, &background);
    gtk_container_add(GTK_CONTAINER(win), GTK_WIDGET(view));

    gchar *html = NULL;
    if (!g_file_get_contents(argv[1], &html, NULL, NULL)) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    const char *base = getenv("BASE");
    webkit_web_view_load_html(view, html, base ? base : "file:///");
    gtk_widget_show_all(win);
    gtk_main();
    return 0;
}
