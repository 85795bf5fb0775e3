rootProject.name = "weather"
