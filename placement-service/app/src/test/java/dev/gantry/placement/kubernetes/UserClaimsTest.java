package dev.gantry.placement.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimSpecBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What users' claims ask for, as NVIDIA's driver documents them (k8s-dra-driver-gpu's demo specs): read exactly, or refused. */
class UserClaimsTest {

    private static UserClaims.Ask read(DeviceRequest... requests) {
        ResourceClaimSpec spec = new ResourceClaimSpecBuilder().withNewDevices().withRequests(requests).endDevices().build();
        return UserClaims.read("c", spec, "gpu.nvidia.com", "gpu.nvidia.com", "mig.nvidia.com");
    }

    private static DeviceRequest request(String name, String cls, Long count, String... cel) {
        DeviceRequestBuilder b = new DeviceRequestBuilder().withName(name).withNewExactly().withDeviceClassName(cls).withCount(count).endExactly();
        for (String e : cel) {
            b.editExactly().addNewSelector().withNewCel().withExpression(e).endCel().endSelector().endExactly();
        }
        return b.build();
    }

    private static DeviceRequest mig(String name, String profile) {
        return request(name, "mig.nvidia.com", null, "device.attributes['gpu.nvidia.com'].profile == '" + profile + "'");
    }

    @Test
    void wholeGpusAndMigDevicesOfOneProfileAreReadAndAddUpOverRequests() {
        assertThat(read(request("gpus", "gpu.nvidia.com", 4L))).satisfies(a -> {
            assertThat(a.refused()).isFalse();
            assertThat(a.devices()).isEqualTo(4);
            assertThat(a.migProfile()).isNull();
        });
        assertThat(read(request("gpu", "gpu.nvidia.com", null))).as("count defaults to one").extracting(UserClaims.Ask::devices).isEqualTo(1);
        UserClaims.Ask two = read(mig("mig-1g-5gb-0", "1g.5gb"), mig("mig-1g-5gb-1", "1g.5gb"));
        assertThat(two.devices()).isEqualTo(2);
        assertThat(two.migProfile()).isEqualTo("1g.5gb");
        assertThat(read(request("m", "mig.nvidia.com", 1L, "device.attributes[\"gpu.nvidia.com\"].profile == \"3g.40gb\"")).migProfile())
                .isEqualTo("3g.40gb");
    }

    @Test
    void whatGantryCannotPlaceExactlyIsRefusedSayingWhat() {
        assertThat(read(mig("a", "1g.5gb"), mig("b", "2g.10gb")).refusal()).contains("different kinds");
        assertThat(read(request("a", "gpu.nvidia.com", 1L), mig("b", "1g.5gb")).refusal()).contains("different kinds");
        assertThat(read(request("m", "mig.nvidia.com", 1L, "device.attributes['other.example.com'].profile == '1g.5gb'")).refusal())
                .as("another driver's attribute").contains("other.example.com");
        assertThat(read(request("m", "mig.nvidia.com", 1L, "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('10Gi')) >= 0"))
                .refusal()).contains("memory");
        assertThat(read(new DeviceRequestBuilder().withName("p").addNewFirstAvailable().withName("big").withDeviceClassName("gpu.nvidia.com")
                .endFirstAvailable().build()).refusal()).contains("firstAvailable");
        assertThat(read(new DeviceRequestBuilder().withName("x").withNewExactly().withDeviceClassName("gpu.nvidia.com").withAdminAccess(true)
                .endExactly().build()).refusal()).contains("admin access");
        ResourceClaimSpec constrained = new ResourceClaimSpecBuilder().withNewDevices().withRequests(request("g", "gpu.nvidia.com", 2L))
                .addNewConstraint().withMatchAttribute("resource.kubernetes.io/pcieRoot").endConstraint().endDevices().build();
        assertThat(UserClaims.read("c", constrained, "gpu.nvidia.com", "gpu.nvidia.com", "mig.nvidia.com").refusal()).contains("constraints");
        assertThat(UserClaims.read("c", new ResourceClaimSpec(), "gpu.nvidia.com", "gpu.nvidia.com", "mig.nvidia.com").refusal())
                .contains("no device");
    }

    @Test
    void aPodsClaimsAddUpWhenOfOneKind() {
        UserClaims.Ask a = read(request("a", "gpu.nvidia.com", 2L));
        UserClaims.Ask b = read(request("b", "gpu.nvidia.com", 2L));
        assertThat(UserClaims.Ask.NONE.plus(a).plus(b).devices()).isEqualTo(4);
        assertThat(a.plus(read(mig("m", "1g.5gb"))).refused()).isTrue();
        assertThat(UserClaims.requests(new ResourceClaimSpecBuilder().withNewDevices().withRequests(request("a", "gpu.nvidia.com", 3L),
                request("b", "gpu.nvidia.com", null)).endDevices().build()))
                .containsExactly(new UserClaims.Request("a", 3), new UserClaims.Request("b", 1));
        assertThat(List.of(UserClaims.Ask.NONE.plus(UserClaims.Ask.NONE))).singleElement().isEqualTo(UserClaims.Ask.NONE);
    }
}
