package dev.gantry.quota.domain;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** domain/ holds the rules and the fair-share function; frameworks stay at the edges. */
class DomainIsPlainJavaTest {

    @Test
    void domainImportsNoFramework() {
        JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages("dev.gantry.quota");
        noClasses().that().resideInAPackage("dev.gantry.quota.domain..")
                .should().dependOnClassesThat().resideInAnyPackage("io.quarkus..", "jakarta..", "io.smallrye..", "org.hibernate..",
                        "com.fasterxml..", "io.micrometer..", "dev.gantry.quota.persistence..", "dev.gantry.quota.rest..",
                        "dev.gantry.quota.service..", "dev.gantry.quota.messaging..", "dev.gantry.kit..")
                .check(classes);
    }
}
