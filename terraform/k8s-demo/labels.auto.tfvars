# Selector labels of the "web" Deployment.  The demo edits the app label
# below: one routine-looking line that forces the Deployment's replacement.
selector_labels = {
  app  = "web"
  tier = "frontend"
}
