// The same project as pom.xml, for Gradle users. Not built here: this machine has no Gradle
// (its distribution comes from services.gradle.org, which is out of reach); pom.xml is what
// tests/dist/run builds.
//     gradle run
plugins {
    kotlin("jvm") version "2.2.21"
    application
}

repositories {
    mavenCentral()
    // Until toolwire is on Maven Central: the repository scripts/dist writes (or mavenLocal()).
    maven { url = uri("../../dist/maven") }
}

dependencies {
    implementation("dev.toolwire:toolwire:0.1.0")
}

kotlin {
    jvmToolchain(17)
}

application {
    mainClass.set("WeatherKt")
}
